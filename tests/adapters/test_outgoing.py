"""One text sanitiser for every outgoing string (bot/adapters/outgoing.py): whatever reply a
command or a digest builds, no bidi override, zero-width character or control character from a
paper's text reaches Slack, Discord or the console.

Breaks that turn this red (each tried): Slack's render() without clean_reply (the `paper`
header, plain_text that escape() never sees, carries U+202E and U+200B); the console's render()
without it (U+202E and ESC printed for `paper`, `digest preview` and the digest); clean_text()
without the C0/C1 controls (ESC reaches the console) or without U+2066–U+2069 (isolates kept).
Discord's render() without clean_reply stays green: its plain()/safe() call the same
clean_text on every field, which is the point of one sanitiser.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from bot.adapters import console
from bot.adapters.discord import embeds
from bot.adapters.outgoing import clean_reply, clean_text
from bot.adapters.slack import blocks
from bot.commands import Context
from bot.commands.replies import Card, Reply, digest_reply
from digest.ingest.parse import make_record
from digest.models import ChannelRef, SubscriptionKind

LAB = ChannelRef("slack", "C1", "T1")
#: What a hostile or broken feed may carry: a right-to-left override, isolates, zero-width
#: characters inside words, a BOM, an escape sequence and a bell.
TITLE = (
    "Diffusion \u202emodels\u202c for Dif\u200bfusion \u2066sampling\u2069\ufeff \x1b[31mred\x07"
)
ABSTRACT = (
    "We study diffusion models for dif\u200bfusion sampling \u202ereversed\u202c text. "
    "Our diffusion models sample faster. \u2067Isolated\u2069 results \x1b[2J hold."
)
AUTHORS = ["Ann\u200f Lee", "Bo\u2060b"]
BAD = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u2060\ufeff\x1b\x07"

BUILDERS = [
    "paper {id}",
    "search diffusion sampling",
    "similar {id}",
    "why {id}",
    "up {id}",
    "top",
    "list",
    "digest preview",
    "subscribe like:{id}",
    "up {id}; export bibtex",
    "digest",  # digest_reply, as the runner posts it
]


def _slack(reply: Reply) -> str:
    parent, items = blocks.render_items(reply)
    shown = [m.__dict__ for m in blocks.render(reply)] + [parent.__dict__]
    return json.dumps(shown + [m.__dict__ for m in items], ensure_ascii=False)


def _discord(reply: Reply) -> str:
    msgs = [*embeds.render(reply), *embeds.render_paged(reply), embeds.render_one(reply)]
    out = [
        (m.content, [e.to_dict() for e in m.embeds], [[b.label for b in r] for r in m.rows])
        for m in msgs
    ]
    return json.dumps(out, ensure_ascii=False)


def _texts(value: object) -> str:
    """Every string a reply holds, joined (repr() would escape the very characters sought)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (tuple, list)):
        return "\n".join(_texts(v) for v in value)
    if hasattr(value, "__dataclass_fields__"):
        return "\n".join(_texts(getattr(value, f)) for f in value.__dataclass_fields__)
    return ""


RENDERERS = {"slack": _slack, "discord": _discord, "console": console.render}


@pytest.fixture
def tainted(app):
    record = make_record(source="jsonl", id="taint-1", title=TITLE, abstract=ABSTRACT)
    record = replace(record, authors=tuple(AUTHORS))
    app.store.papers.upsert([record])
    stored = app.papers.paper("taint-1")
    assert any(c in stored.title + stored.abstract for c in BAD), "the store kept them"
    app.channels.claim(LAB, "U1", "lab", True)
    app.channels.follows.add(LAB, SubscriptionKind.TOPIC, "diffusion sampling")
    other = ChannelRef("slack", "C2", "T1")  # a 👍 elsewhere: `top` names it, LAB still gets it
    app.channels.claim(other, "U2", "reading", True)
    app.channels.follows.add(other, SubscriptionKind.TOPIC, "diffusion sampling")
    app.channels.vote(other, "U2", "taint-1", 1)
    return app


@pytest.mark.parametrize("platform", sorted(RENDERERS))
@pytest.mark.parametrize("builder", BUILDERS)
def test_no_hidden_character_reaches_any_platform(tainted, builder, platform):
    app = tainted
    if builder == "digest":
        reply = digest_reply(app.digests.preview(LAB, datetime.now(UTC).date()))
    else:
        for text in builder.format(id="taint-1").split("; "):
            reply = app.commands.handle(text, Context(LAB, "U1", visible=None))
    assert not reply.error, reply
    assert any(c in _texts(reply) for c in BAD) or (builder in ("list", "up {id}")), (
        f"{builder}: the reply should carry the paper's text to be a test at all"
    )
    shown = RENDERERS[platform](reply)
    assert not [c for c in BAD if c in shown], (builder, platform, shown[:600])
    assert "Dif\u200bfusion" not in shown and "dif\u200bfusion" not in shown


def test_clean_text_keeps_what_people_read():
    """Line breaks, tabs, accents, CJK, emoji sequences and Persian joiners stay; a card built
    with hidden characters comes out clean field by field."""
    kept = "Zoë\tnaïve 注意\n👩\u200d🔬 \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    assert clean_text(kept) == kept
    assert clean_text("a\r\nb\u2028c") == "a\nb\nc"
    card = Card("p1", "Safe\u202etxt.exe", None, "Ann\u2066", "", "snip\u200bpet")
    assert clean_reply(Reply(text="x\x1b", cards=(card,))) == Reply(
        text="x", cards=(Card("p1", "Safetxt.exe", None, "Ann", "", "snippet"),)
    )
