"""Discord rendering of neutral replies: embeds and button rows within every Discord limit."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import discord
from discord.utils import escape_markdown, escape_mentions

from bot.adapters.outgoing import clean_reply, clean_text, cut
from bot.commands.replies import Action, Card, Reply, why_parts

MAX_CONTENT = 2000
MAX_TITLE = 256
MAX_DESCRIPTION = 4096
MAX_FIELD = 1024
MAX_FOOTER = 2048
MAX_EMBEDS = 10
MAX_TOTAL = 6000
PAPERS_PER_MESSAGE = 5  # one row of buttons per paper, and a message holds five rows
MAX_CUSTOM_ID = 100
MAX_LINK_URL = 512  # a link button's url (an embed's own link may be longer)
MAX_LABEL = 80  # a button's label


@dataclass(frozen=True)
class ButtonSpec:
    """A button to build: a feedback/more/page button (custom_id) or a link (url)."""

    label: str
    custom_id: str | None = None
    url: str | None = None


@dataclass
class DiscordMessage:
    """One message's worth: content, embeds and rows of buttons."""

    content: str = ""
    embeds: list[discord.Embed] = field(default_factory=list)
    rows: list[list[ButtonSpec]] = field(default_factory=list)
    paper_ids: tuple[str, ...] = ()
    #: The users its content mentions: the only ones its allowed_mentions lets it ping.
    mentions: tuple[str, ...] = ()


#: A user id Discord can mention (a snowflake); anything else is never written as a mention.
SNOWFLAKE = re.compile(r"[1-9][0-9]{16,19}")
#: Discord pings at most 100 users a message (allowed_mentions.users); the content's 2,000
#: characters hold fewer still, so a message names at most this many people.
MAX_MENTIONED = 80


def mention_content(cards: list[Card]) -> tuple[str, tuple[str, ...]]:
    """The content line that pings the people a message's cards mention ('#2 → <@1…>'), and
    who they are: snowflakes only, each once, at most MAX_MENTIONED."""
    lines: list[str] = []
    users: list[str] = []
    for c in cards:
        here = [u for u in dict.fromkeys(c.mentions) if SNOWFLAKE.fullmatch(u) and u not in users]
        here = here[: MAX_MENTIONED - len(users)]
        if here:
            users += here
            rank = f"#{c.rank} " if c.rank is not None else ""
            lines.append(rank + "→ " + " ".join(f"<@{u}>" for u in here))
    return "\n".join(lines), tuple(users)


# <#channel>, </cmd:id>, <t:stamp>, <@user>, <:emoji:id>, <id:browse>: live tokens in Discord.
TOKEN = re.compile(r"<(?=[#@/]|t:|a?:\w+:|id:)")


def plain(text: str) -> str:
    """Text without bidi controls and hidden characters (for titles, footers and labels too)."""
    return clean_text(text or "")


def safe(text: str) -> str:
    """Markdown, mentions and Discord's <...> tokens neutralised, hidden characters removed.

    Defence in depth: messages also go out with no allowed mentions. escape_markdown matches
    links greedily, so in '[a](u) [b](v)' only the first bracket is escaped; escaping every
    remaining '[' leaves no masked link that Discord could render. escape_markdown doubles every
    backslash, so a '<' it leaves is never already escaped.
    """
    escaped = escape_mentions(escape_markdown(plain(text)))
    # A '[' after an even number of backslashes (none, or escaped ones) would still open a link.
    escaped = re.sub(r"(?<!\\)((?:\\\\)*)\[", lambda m: m.group(1) + "\\[", escaped)
    return TOKEN.sub(r"\\<", escaped)


CODE = re.compile(r"`[^`\n]+`")  # a one-line code span, as the core writes its `/papers …` hints


def rich(text: str) -> str:
    """:func:`safe`, except that code spans stay code (escaped, their backticks would show).

    Inside a span Discord renders nothing (no Markdown, links or mentions), so its text only loses
    hidden characters; every backtick outside a matched pair is escaped, so spans open nowhere else.
    """
    out, at = [], 0
    for m in CODE.finditer(text):
        out += [safe(text[at : m.start()]), plain(m.group())]
        at = m.end()
    return "".join([*out, safe(text[at:])])


def safe_url(url: str | None) -> str | None:
    """Only http(s) links."""
    return url if url and re.match(r"https?://\S+$", url) and len(url) <= 2000 else None


def custom_id(kind: str, value: str) -> str | None:
    """``dv:<kind>:<value>`` if it fits Discord's 100-character limit (else no button)."""
    cid = f"dv:{kind}:{value}"
    return cid if len(cid) <= MAX_CUSTOM_ID else None


def card_embed(c: Card) -> discord.Embed:
    """A paper: linked title, authors and venue, TL;DR, snippet, why."""
    meta = " · ".join(safe(x) for x in (c.authors, c.venue) if x)
    rank = f"{c.rank}. " if c.rank is not None else ""
    text = f"TL;DR: {safe(c.tldr)}\n{safe(c.snippet)}" if c.tldr else safe(c.snippet)
    embed = discord.Embed(
        title=cut(safe(rank + c.title), MAX_TITLE),
        url=safe_url(c.url),
        description=cut(f"{meta}\n{text}" if meta else text, 1200),
    )
    if c.why:
        why = "".join(f"*{safe(t)}*" if em else safe(t) for t, em in why_parts(c.why))
        why += f" ({c.score:.2f})" if c.score is not None else ""
        embed.add_field(name="Why", value=cut(why, MAX_FIELD), inline=False)
    embed.set_footer(text=cut(plain(c.paper_id), MAX_FOOTER))
    return embed


def _button_id(a: Action) -> str | None:
    """A button's custom_id: ``dv:u:<paper>``; a vote naming its digest ('<paper> <channel
    id>', shown away from it, e.g. in a DM) ``dv:u@<channel id>:<paper>``."""
    kind = {"up": "u", "down": "d", "more": "m", "save": "z", "rg_vote": "g"}[a.kind]
    paper, _, channel = a.value.partition(" ")
    if a.kind in ("up", "down") and channel.isdigit():
        return custom_id(f"{kind}@{channel}", paper)
    return custom_id(kind, a.value)


def numbered(label: str, n: int | None) -> str:
    """A button's label naming its paper: '👍 #2', 'More like #2', 'PDF #2' (≤ 80 characters).

    Discord shows a message's buttons below all its embeds, so a row must say whose it is; the
    number is the one the paper's embed title starts with. A trailing 'this' / 'this one'
    becomes the number ('More like this' -> 'More like #2', '👍 this one' -> '👍 #2').
    """
    label = plain(label)
    if n is None:
        return cut(label, MAX_LABEL)
    tail = f" #{n}"
    base = re.sub(r"\s+this(?: one)?$", "", label) or label
    return cut(base, MAX_LABEL - len(tail)) + tail


def card_row(c: Card) -> list[ButtonSpec]:
    """👍 / 👎 / More like this / Save to Zotero, then a link button (five in a row), each
    labelled with the card's rank."""
    n = c.rank
    row = [
        ButtonSpec(numbered(a.label, n), custom_id=cid)
        for a in c.actions
        if a.kind in ("up", "down", "more", "save", "rg_vote") and (cid := _button_id(a))
    ]
    links = [
        ButtonSpec(numbered(a.label, n), url=u)
        for a in c.actions
        # Discord refuses a link button over 512 characters (50035): that card goes without it
        if a.kind == "link" and (u := safe_url(a.url)) and len(u) <= MAX_LINK_URL
    ]
    return (row + links)[:5]


def ranked(cards: tuple[Card, ...]) -> list[Card]:
    """Cards numbered as shown: several cards without a rank (the "which paper?" DM) get their
    place, so each embed title and its button row carry the same number."""
    if len(cards) < 2:
        return list(cards)
    return [c if c.rank is not None else replace(c, rank=i) for i, c in enumerate(cards, 1)]


def _size(embeds: list[discord.Embed]) -> int:
    return sum(len(e) for e in embeds)


def header(reply: Reply) -> discord.Embed:
    """The reply's own embed: title and text, both escaped (a long text cut: see headers)."""
    title = cut(safe(reply.title or "digestbot"), MAX_TITLE)
    return discord.Embed(title=title, description=cut(rich(reply.text), MAX_DESCRIPTION))


def chunks(text: str, limit: int = MAX_DESCRIPTION) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters, split at line ends where possible.

    Nothing is dropped: a `list` of 50 long topics keeps its schedule and settings lines. A line
    longer than ``limit`` is split inside, before a space where there is one (no word broken in
    two), never right after an escaping backslash.
    """
    out: list[str] = []
    piece = ""
    for line in text.split("\n"):
        while len(line) > limit:
            space = line.rfind(" ", 0, limit)  # a word is never broken over two embeds
            at = space if space > limit // 2 else limit
            while at > 1 and (len(line[:at]) - len(line[:at].rstrip("\\"))) % 2:
                at -= 1  # an odd run of backslashes at the end would escape the next piece
            if piece:
                out.append(piece)
                piece = ""
            out.append(line[:at])
            line = line[at:]
        joined = f"{piece}\n{line}" if piece else line
        if len(joined) <= limit:
            piece = joined
        else:
            out.append(piece)
            piece = line
    return [p for p in (*out, piece) if p.strip()] or [""]


def headers(reply: Reply) -> list[discord.Embed]:
    """The reply's own embeds: the title on the first, the text split over as many as it needs,
    the footer on the last (an embed of its own if the last would pass the 6,000 total)."""
    title = cut(safe(reply.title or "digestbot"), MAX_TITLE)
    embeds = [discord.Embed(description=c) for c in chunks(rich(reply.text))]
    embeds[0].title = title
    if reply.footer:
        foot = cut(reply.footer, MAX_FOOTER)
        if len(embeds[-1]) + len(foot) > MAX_TOTAL:
            embeds.append(discord.Embed())
        embeds[-1].set_footer(text=foot)
    return embeds


def packed(embeds: list[discord.Embed]) -> list[list[discord.Embed]]:
    """Embeds in order, as few messages' worth as fit (≤ 10 embeds, ≤ 6,000 characters each)."""
    groups: list[list[discord.Embed]] = []
    for e in embeds:
        if not groups or len(groups[-1]) >= MAX_EMBEDS or _size(groups[-1]) + len(e) > MAX_TOTAL:
            groups.append([])
        groups[-1].append(e)
    return groups


def render(
    reply: Reply, per_message: int = PAPERS_PER_MESSAGE, merge: bool = True
) -> list[DiscordMessage]:
    """A reply as messages: a header embed, then papers five to a message (long replies split).

    ``merge`` lets a short reply travel as one message; threaded digests keep the header apart.
    """
    reply = clean_reply(reply)  # every reply and digest passes here: one sanitiser for all text
    heads = headers(reply)
    page_row = [
        ButtonSpec(a.label, custom_id=custom_id("p", a.value))
        for a in reply.actions
        if a.kind == "page"
    ]
    page_row = [b for b in page_row if b.custom_id]
    messages = [DiscordMessage(embeds=group) for group in packed(heads)]
    n_heads = len(messages)
    if page_row:
        per_message = min(per_message, 4)  # the pager needs one of the five rows
    numbered_cards = ranked(reply.cards)
    for start in range(0, len(numbered_cards), per_message):
        cards = numbered_cards[start : start + per_message]
        content, users = mention_content(cards)
        msg = DiscordMessage(
            content,
            embeds=[card_embed(c) for c in cards],
            rows=[card_row(c) for c in cards],
            mentions=users,
        )
        msg.paper_ids = tuple(c.paper_id for c in cards)
        messages.append(msg)
    if (
        merge
        and n_heads == 1
        and len(messages) == 2
        and _size(messages[0].embeds + messages[1].embeds) <= MAX_TOTAL
        and len(messages[0].embeds) + len(messages[1].embeds) <= MAX_EMBEDS
    ):
        merged = messages[1]  # a short reply fits in one message: header plus papers
        merged.embeds[:0] = messages[0].embeds
        messages = [merged]
    if page_row:
        messages[-1].rows.append(page_row)
    for m in messages:  # Discord counts every embed's text towards one 6,000-character budget
        _fit(m)
    return messages


def stamp(msg: DiscordMessage, key: str) -> DiscordMessage:
    """A copy whose last footer ends with the delivery key, never cut, all within 6,000 chars."""
    embeds = [discord.Embed.from_dict(e.to_dict()) for e in msg.embeds] or [discord.Embed()]
    last, tail = embeds[-1], f" · {key}"
    base = cut(last.footer.text, MAX_FOOTER - len(tail)) if last.footer.text else ""
    last.set_footer(text=base + tail if base else key)
    while (excess := _size(embeds) - MAX_TOTAL) > 0:  # the key stays; descriptions give way
        longest = max(embeds, key=lambda e: len(e.description or ""))
        if not longest.description:
            break  # nothing left to shorten: the validator will refuse it, and we degrade
        longest.description = cut(longest.description, max(1, len(longest.description) - excess))
    return DiscordMessage(
        msg.content, embeds, [list(r) for r in msg.rows], msg.paper_ids, msg.mentions
    )


def render_paged(reply: Reply) -> list[DiscordMessage]:
    """A paged reply: one message with the papers and the pager (a page turn edits it in place),
    after as many text-only messages as text that does not fit beside them needs: the text is
    split at line ends, never cut (the last lines, e.g. "page 2 of 5", stay on the paged one)."""
    reply = clean_reply(reply)
    bare = render_one(replace(reply, text=""))
    room = min(MAX_DESCRIPTION, MAX_TOTAL - _size(bare.embeds))
    lines, tail = rich(reply.text).split("\n"), []
    while lines and len("\n".join([lines[-1], *tail])) <= room:
        tail.insert(0, lines.pop())
    if not lines:
        return [render_one(reply)]
    lead = [discord.Embed(description=c) for c in chunks("\n".join(lines))]
    lead[0].title = cut(safe(reply.title or "digestbot"), MAX_TITLE)
    return [DiscordMessage(embeds=group) for group in packed(lead)] + [
        render_one(reply, "\n".join(tail))
    ]


def render_one(reply: Reply, description: str | None = None) -> DiscordMessage:
    """A paged reply as one message (header, papers, links, pager), so a page turn can edit it.

    ``description``: the header's text, already escaped (render_paged's share of a long text)."""
    reply = clean_reply(reply)
    head = header(reply)
    if description is not None:
        head.description = description or None
    cards = ranked(reply.cards[: MAX_EMBEDS - 1])
    pager = [
        ButtonSpec(a.label, custom_id=cid)
        for a in reply.actions
        if a.kind == "page" and (cid := custom_id("p", a.value))
    ]
    rows = [r for r in (card_row(c) for c in cards) if r][: 5 - bool(pager)]
    msg = DiscordMessage(
        embeds=[head, *(card_embed(c) for c in cards)], rows=rows + [pager][: bool(pager)]
    )
    msg.paper_ids = tuple(c.paper_id for c in cards)
    _fit(msg)
    return msg


def _fit(m: DiscordMessage) -> None:
    """Halve the longest description (then field) until the embeds fit Discord's 6,000 total."""
    while _size(m.embeds) > MAX_TOTAL:
        texts = [e for e in m.embeds if len(e.description or "") > 100]
        if texts:
            e = max(texts, key=lambda e: len(e.description))
            e.description = cut(e.description, max(100, len(e.description) // 2))
            continue
        fields = [(e, n, f) for e in m.embeds for n, f in enumerate(e.fields) if len(f.value) > 100]
        if not fields:
            return  # nothing left worth cutting; the shared validator names what is over
        e, n, f = max(fields, key=lambda x: len(x[2].value))
        e.set_field_at(
            n, name=f.name, value=cut(f.value, max(100, len(f.value) // 2)), inline=f.inline
        )


def attachment(reply: Reply) -> discord.File | None:
    """An attached export, or a picture with its alt text (Discord's attachment description)."""
    import io

    if reply.image is not None:
        pic = reply.image
        return discord.File(io.BytesIO(pic.png), filename=pic.filename, description=pic.alt[:1024])
    if reply.attachment is None:
        return None
    name, content = reply.attachment
    return discord.File(io.BytesIO(content.encode()), filename=name)
