"""Platform-neutral replies: what a command or digest says; adapters only decide how it looks."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from digest.ingest import FEED_HINT
from digest.models import ChannelRef, Links, Paper
from digest.text.hashes import normalize_title
from digest.text.headline import contribution_sentences, shorten
from digest.text.links import http_only, is_http
from digest.text.numbers import plural
from digest.text.sentences import sentences
from digest.tldr.extractive import line_of, tldr_line

if TYPE_CHECKING:
    from digest.delivery.compose import Digest
    from digest.weekly.picture import Picture

SNIPPET_CHARS = 280
# A why-line names a liked paper's title between asterisks ('like *Title*, which you liked');
# the ranker drops '*' from titles, so the markers always pair. Renderers show it in italics.
TITLE_REF = re.compile(r"(?<=like )\*([^*\n]+)\*")


def why_parts(why: str) -> list[tuple[str, bool]]:
    """A why-line as (text, is a named title) pieces, for renderers that can italicise."""
    out, at = [], 0
    for m in TITLE_REF.finditer(why):
        out += [(why[at : m.start()], False), (m.group(1), True)]
        at = m.end()
    return [(t, em) for t, em in [*out, (why[at:], False)] if t]


@dataclass(frozen=True)
class Action:
    """A button: feedback, 'more like this', a page turn, or a link."""

    kind: str  # up | down | more | page | link
    label: str
    value: str = ""
    url: str | None = None
    page: int | None = None  # for page turns: the page this button shows


@dataclass(frozen=True)
class Card:
    """A paper as shown in chat."""

    paper_id: str
    title: str
    url: str | None
    authors: str
    venue: str
    snippet: str
    why: str = ""
    rank: int | None = None
    score: float | None = None
    actions: tuple[Action, ...] = ()
    tldr: str = ""  # one sentence: what the paper did and found (digest/tldr/extractive.py)
    #: Members to mention on it ("→ @alice"): user ids, each adapter writes its platform's
    #: mention (docs/mentions.md); never anyone else, never a channel-wide ping.
    mentions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reply:
    """What the bot answers; ``ephemeral`` replies are shown only to the person who asked."""

    text: str
    title: str | None = None
    cards: tuple[Card, ...] = ()
    footer: str | None = None
    actions: tuple[Action, ...] = ()
    ephemeral: bool = True
    public: bool = False  # the person asked (`--public`) to share this answer in the channel
    error: bool = False
    attachment: tuple[str, str] | None = None  # (file name, content), e.g. a .bib export
    # A PNG with its alt text (`stats`): each adapter uploads it its platform's way (upload_image)
    image: Picture | None = None
    deliver_now: ChannelRef | None = None  # the runner should post this channel's digest now
    schedule_changed: ChannelRef | None = None  # the scheduler should re-read this channel
    threaded: bool = False  # a digest whose papers go as replies under its header
    #: A private form the platform should open for the person (Slack modal, Discord modal,
    #: console prompt), e.g. FORM_ZOTERO; its answers come back as one typed command.
    form: str | None = None
    #: Posted as a reply in the thread of this platform message (its reference, as the
    #: platform gave it): the reading group's thread posts under the pick's announcement.
    reply_to: str | None = None


#: Said alike on every platform: a page button whose search expired, a vote on a deleted
#: digest, a command that needs something followed first.
SEARCH_GONE = "That search is no longer stored; run `/papers search` again."
DIGEST_GONE = "That digest no longer exists; your vote was not recorded."
FOLLOWS_NOTHING = "This channel follows nothing yet; `/papers subscribe <topic>` first."


def error(text: str) -> Reply:
    """A short ephemeral error."""
    return Reply(text=text, error=True)


def nothing_close(title: str) -> Reply:
    """`similar` when no stored paper is closer to ``title`` than unrelated papers get: said
    plainly rather than listing the least unrelated ones."""
    return Reply(
        text=f"Nothing stored is close to this paper ({shorten(title, 80)!r}) yet; "
        "`/papers similar` will list papers once close ones arrive.",
        title="More like this",
    )


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """The start of an abstract, cut on a word boundary."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


@lru_cache(maxsize=4096)  # a tick renders the same few papers for thousands of channels
def _snippet(abstract: str, title_derived: bool, tldr: str, title: str = "") -> str:
    """A card's snippet: the abstract (under a derived headline, the sentences that say what
    the paper does), less the sentence already shown as the TL;DR (the card says it once)."""
    body = (_said(abstract) or abstract) if title_derived else abstract
    if tldr:
        shown = normalize_title(tldr)
        kept = [s for s in sentences(body) if normalize_title(line_of(s, abstract, title)) != shown]
        body = " ".join(kept[:2] if title_derived else kept)
    return snippet(body)


@lru_cache(maxsize=4096)
def _said(abstract: str) -> str:
    """The sentences of ``abstract`` that say what the paper does, joined ('' if none): a tick
    renders the same few papers for thousands of channels."""
    return " ".join(contribution_sentences(abstract, limit=3))


def headline(p: Paper) -> str:
    """The title as shown in chat; a derived one carries a subtle marker (≈)."""
    return f"≈ {p.title}" if p.title_derived else p.title


def paper_url(p: Paper) -> str | None:
    """The best single link for a paper's title (http(s) only: a stored value that is no link,
    from a file read before ingest checked, is never rendered as one)."""
    return http_only(p.links.abs) or http_only(p.links.forum) or http_only(p.links.pdf)


def link_actions(p: Paper) -> tuple[Action, ...]:
    """Link buttons for the places a paper can be read."""
    return _link_actions(p.links)


@lru_cache(maxsize=4096)  # a tick renders the same few papers' cards for thousands of channels
def _link_actions(links: Links) -> tuple[Action, ...]:
    named = (
        ("PDF", links.pdf),
        ("arXiv", links.abs),
        ("OpenReview", links.forum),
        ("Code", links.code),
    )
    return tuple(Action("link", label, url=url) for label, url in named if is_http(url))


@lru_cache(maxsize=4096)
def _feedback_actions(paper_id: str) -> tuple[Action, ...]:
    return (
        Action("up", "👍", paper_id),
        Action("down", "👎", paper_id),
        Action("more", "More like this", paper_id),
    )


def card(
    p: Paper,
    why: str = "",
    rank: int | None = None,
    score: float | None = None,
    feedback: bool = False,
    mentions: tuple[str, ...] = (),
) -> Card:
    """A card for ``p``; digest cards carry 👍/👎/More like this buttons."""
    authors = ", ".join(p.authors[:4]) + (" et al." if len(p.authors) > 4 else "")
    tldr = tldr_line(p)
    buttons = (*_feedback_actions(p.id), Action("save", "📚 Save to Zotero", p.id))
    return Card(
        paper_id=p.id,
        title=headline(p),
        url=paper_url(p),
        authors=authors,
        venue=p.venue or "",
        snippet=_snippet(p.abstract, p.title_derived, tldr, p.title),
        why=why,
        rank=rank,
        score=score,
        actions=(buttons if feedback else ()) + link_actions(p),
        tldr=tldr,
        mentions=tuple(mentions),
    )


def summary_line(d: Digest, upcoming: bool = False) -> str:
    """The counts under a digest's header; an empty preview of a digest still to come (today's
    went out, or a later day) says no paper matches *yet*, not that none matched today."""
    if not (upcoming and d.empty):
        return d.summary()
    near = f"{d.near_misses} near miss{'es' if d.near_misses != 1 else ''}"
    line = f"No new papers match yet for the next digest ({d.considered} new considered, {near})."
    return f"{line} {FEED_HINT}" if not d.considered else line


def liked_in(channels: tuple[str, ...] | list[str], most: int = 3) -> str:
    """'👍 in #ml-reading, #lab' (and how many more): where colleagues liked a paper."""
    named = ", ".join(f"#{c}" for c in channels[:most])
    more = f" and {len(channels) - most} more" if len(channels) > most else ""
    return f"👍 in {named}{more}"


def _with_likes(why: str, channels: tuple[str, ...]) -> str:
    """A digest pick's why-line, marked when other channels of the workspace 👍'd the paper."""
    if not channels:
        return why
    return f"{why} · {liked_in(channels)}" if why else liked_in(channels)


#: A digest's "Following: …" footer names each interest up to this length and this many liked
#: papers; past either (an imported library: dozens of titles) it counts them instead.
FOLLOWING_CHARS = 200
FOLLOWING_LIKES = 3


def following(interests: tuple[str, ...]) -> str:
    """What a digest's footer says the channel follows: each interest while they are few
    ('diffusion models, like: Sparse probing…'), else counted ('3 topics and 21 papers you
    like'). ``interests`` as compose.interests() writes them: 'author:…', 'like…', '-…'."""
    listed = ", ".join(interests)
    likes = sum(i.startswith("like") for i in interests)
    if not interests:
        return "nothing yet"
    if len(listed) <= FOLLOWING_CHARS and likes <= FOLLOWING_LIKES:
        return listed
    authors = sum(i.startswith("author:") for i in interests)
    excludes = sum(i.startswith("-") for i in interests)
    topics = len(interests) - likes - authors - excludes
    parts = [plural(topics, "topic")] if topics else []
    parts += [plural(authors, "author")] if authors else []
    parts += [f"{plural(likes, 'paper')} you like"] if likes else []
    said = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + f" and {parts[-1]}"
    said += f", excluding {plural(excludes, 'term')}" if excludes else ""
    return f"{said} (`/papers list` names them)"


def digest_reply(d: Digest, upcoming: bool = False) -> Reply:
    """A digest as a public reply: header, counts, one card per paper (``upcoming``: a preview
    of a digest still to come, see summary_line)."""
    follows = following(d.interests)
    return Reply(
        text=summary_line(d, upcoming),
        title=f"📚 {d.title()}",
        cards=tuple(
            card(
                i.paper,
                _with_likes(i.why, d.elsewhere.get(i.paper.id, ())),
                i.rank,
                i.score,
                True,
                i.mentions,
            )
            for i in d.items
        ),
        footer=f"Following: {follows}",
        ephemeral=False,
        threaded=d.channel.threaded,
    )
