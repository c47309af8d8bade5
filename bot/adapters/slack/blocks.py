"""Block Kit rendering of neutral replies, within every Slack limit and safe for any input text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

from bot.adapters.outgoing import clean_reply, clean_text, cut
from bot.commands.replies import Action, Card, Reply, why_parts

MAX_BLOCKS = 50
MAX_SECTION = 3000
MAX_HEADER = 150
MAX_BUTTON_TEXT = 75
MAX_ID = 255
MAX_VALUE = 2000
MAX_FALLBACK = 3000
MAX_URL = 3000


@dataclass(frozen=True)
class SlackMessage:
    """One chat.postMessage worth of content."""

    text: str
    blocks: list[dict]
    paper_ids: tuple[str, ...] = ()


def escape(text: str) -> str:
    """Slack's control characters as entities: no mention, channel ping or link can be injected;
    characters that reorder or hide text are dropped."""
    text = clean_text(text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescape(text: str) -> str:
    """What the person typed: Slack sends typed `&`, `<`, `>` as entities (`&amp;` last)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def plain(text: str) -> str:
    """Text for mrkdwn that can neither mention nor format: escaped, markup characters neutralised."""
    return re.sub(r"([*_~`])", "\\1\u200b", escape(text))


CODE_SPAN = re.compile(r"(`[^`\n]+`)")


def markup(text: str) -> str:
    """The bot's own text: its `code` spans kept intact (escaped only), everything else as plain().

    Help and usage hints quote commands in code spans; neutralising those with zero-width spaces
    would make a copied `/papers ...` command fail. Data inside a reply is still escaped, so no
    mention or link can be injected either way.
    """
    return "".join(
        escape(part) if CODE_SPAN.fullmatch(part) else plain(part) for part in CODE_SPAN.split(text)
    )


def safe_url(url: str | None) -> str | None:
    """Only http(s) links, with the characters that would end a Slack link percent-encoded."""
    if not url or not re.match(r"https?://", url):
        return None
    return quote(url, safe=":/?#[]@!$&'()*+,;=%~-._")


def _fits(url: str | None) -> bool:
    """A link a button can carry (Slack: http(s), at most 3,000 characters)."""
    return (u := safe_url(url)) is not None and len(u) <= MAX_URL


def _text(kind: str, text: str) -> dict:
    return {"type": kind, "text": text or " "}


#: A Slack user id (members U…, enterprise W…): the only thing ever written as a mention.
USER_ID = re.compile(r"[UW][A-Z0-9]{1,20}")
#: At most this many people named a card or message: their tokens stay well inside a block's
#: 3,000 characters, and none is ever cut in half.
MAX_MENTIONED = 100


def mention_tokens(users: tuple[str, ...]) -> str:
    """'<@U1> <@U2>' for the user ids among ``users``; never <!channel>, <!here>, <!everyone>
    (every other text is escaped, so none can be injected either)."""
    ids = [u for u in dict.fromkeys(users) if USER_ID.fullmatch(u)]
    return " ".join(f"<@{u}>" for u in ids[:MAX_MENTIONED])


def _button(a: Action, paper_id: str) -> dict:
    button = {"type": "button", "text": _text("plain_text", cut(a.label, MAX_BUTTON_TEXT))}
    if a.kind == "link":
        button["url"] = safe_url(a.url)
        button["action_id"] = cut(f"link_{a.label.lower()}_{paper_id}", MAX_ID)
    else:
        kinds = {"up": "vote_up", "down": "vote_down", "more": "more_like"}
        button["action_id"] = kinds.get(a.kind, a.kind)
        button["value"] = cut(a.value, MAX_VALUE)
    return button


def card_blocks(c: Card) -> list[dict]:
    """A paper: linked title with authors and venue, TL;DR, snippet, why, then its buttons."""
    title = plain(c.title)
    url = safe_url(c.url)
    rank = f"{c.rank}. " if c.rank is not None else ""
    meta = " · ".join(plain(x) for x in (c.authors, c.venue) if x)
    text = f"*TL;DR:* {plain(c.tldr)}\n{plain(c.snippet)}" if c.tldr else plain(c.snippet)
    tail = f"\n{meta}\n{text}" if meta else f"\n{text}"
    body = f"{rank}*<{url}|{title}>*{tail}" if url else ""
    if len(body) > MAX_SECTION:  # a cut would break the link's markup: this title goes unlinked
        body = ""
    body = body or f"{rank}*{title}*{tail}"
    block_id = cut(f"paper:{c.paper_id}", MAX_ID)
    blocks = [
        {"type": "section", "block_id": block_id, "text": _text("mrkdwn", cut(body, MAX_SECTION))}
    ]
    if c.why:
        score = f" ({c.score:.2f})" if c.score is not None else ""
        why = "".join(f"_{plain(t)}_" if em else plain(t) for t, em in why_parts(c.why))
        blocks.append(
            {
                "type": "context",
                "elements": [_text("mrkdwn", cut(f"why: {why}{score}", MAX_SECTION))],
            }
        )
    if who := mention_tokens(c.mentions):
        blocks.append({"type": "context", "elements": [_text("mrkdwn", f"→ {who}")]})
    # Slack refuses the whole message for one url over 3,000 characters: only this card loses it
    buttons = [_button(a, c.paper_id) for a in c.actions if a.kind != "link" or _fits(a.url)]
    if buttons:
        blocks.append(
            {
                "type": "actions",
                "block_id": cut(f"act:{c.paper_id}", MAX_ID),
                "elements": buttons[:25],
            }
        )
    return blocks


def _header(title: str) -> str:
    """A title (a paper's, for the reading group's thread posts) as a header: escaped like
    every other text, so a `<!channel>` in it is shown, never sent as a ping; cut so that the
    escaped text fits."""
    n = MAX_HEADER
    while len(head := escape(cut(title, n))) > MAX_HEADER:
        n -= 1
    return head


def _head_blocks(reply: Reply) -> list[dict]:
    blocks = []
    if reply.title:
        blocks.append({"type": "header", "text": _text("plain_text", _header(reply.title))})
    if reply.text:
        blocks.append(
            {"type": "section", "text": _text("mrkdwn", cut(markup(reply.text), MAX_SECTION))}
        )
    return blocks


def fallback(reply: Reply, cards: list[Card] | None = None) -> str:
    """The notification / screen-reader text every message must carry; it names the people
    the message's ``cards`` mention (the notification is what reaches them)."""
    parts = [reply.title or "", reply.text or ""] + [f"• {c.title}" for c in reply.cards[:10]]
    who = mention_tokens(tuple(u for c in cards or () for u in c.mentions))
    tail = f"\n→ {who}" if who else ""
    text = cut(escape("\n".join(p for p in parts if p)), MAX_FALLBACK - len(tail)) + tail
    return text.strip() or "digestbot"


def render(reply: Reply) -> list[SlackMessage]:
    """A reply as one or more messages of at most 50 blocks each (long digests are split)."""
    reply = clean_reply(reply)  # every reply and digest passes here: one sanitiser for all text
    head = _head_blocks(reply)
    tail = []
    pages = [a for a in reply.actions if a.kind == "page"]
    if pages:
        tail.append(
            # Slack rejects a block whose elements share an action_id (invalid_blocks).
            {
                "type": "actions",
                "block_id": "pages",
                "elements": [
                    {**_button(a, ""), "action_id": f"page_{i}"} for i, a in enumerate(pages)
                ],
            }
        )
    if reply.footer:
        tail.append(
            {
                "type": "context",
                "elements": [_text("mrkdwn", cut(markup(reply.footer), MAX_SECTION))],
            }
        )
    messages, current = [], list(head)
    shown: list[Card] = []
    for c in reply.cards:
        blocks = card_blocks(c)
        if len(current) + len(blocks) > MAX_BLOCKS - len(tail):
            ids = tuple(x.paper_id for x in shown)
            messages.append(SlackMessage(fallback(reply, shown), current, ids))
            current, shown = [], []
        current += blocks
        shown.append(c)
    current += tail
    ids = tuple(x.paper_id for x in shown)
    messages.append(SlackMessage(fallback(reply, shown), current, ids))
    return messages


def _item_text(c: Card) -> str:
    """A threaded paper's fallback text: its title, then whom it mentions."""
    who = mention_tokens(c.mentions)
    tail = f"\n→ {who}" if who else ""
    return cut(escape(c.title), MAX_FALLBACK - len(tail)) + tail


def render_items(reply: Reply) -> tuple[SlackMessage, list[SlackMessage]]:
    """Threaded digests: a parent message (header, counts, footer) and one message per paper."""
    reply = clean_reply(reply)
    parent = Reply(text=reply.text, title=reply.title, footer=reply.footer, ephemeral=False)
    items = [SlackMessage(_item_text(c), card_blocks(c), (c.paper_id,)) for c in reply.cards]
    return render(parent)[0], items
