"""Long Discord replies are split over embeds and messages, never cut (issue 23).

`/papers list` on a channel following 50 topics of 200 characters (with Markdown to escape) is far
over one embed's 4,096 characters and one message's 6,000: every topic and the schedule, "Today's
digest" and settings lines still arrive, in follow-ups the strict fake accepts (it refuses what
Discord refuses: 50035 on a description over 4,096, a message over 6,000 or over 10 embeds).

Breaks that turn this red (each tried): header() cutting the text at 4,096 again (render using
one cut embed: the settings line is lost); packed() putting every embed in one message (the fake
refuses the follow-up: over 6,000); chunks() splitting right after an escaping backslash (a piece
ends in a lone backslash); chunks() dropping the piece being built when a line does not fit;
a paged search sent as render_one() alone (its header cut at 4,096: the count line is lost), or
render_paged() keeping more text beside the papers than the 6,000 total leaves (_fit cuts it);
chunks() splitting a long line at the limit, not before a space (a word broken over two embeds).
"""

from __future__ import annotations

import pytest

from bot.adapters.discord.embeds import chunks, render, render_paged, rich, safe
from bot.adapters.discord.limits import message_problems
from bot.adapters.discord.poster import payload
from bot.commands.replies import Action, Card, Reply
from tests.support.discord_app import (  # noqa: F401
    button,
    discord_app_bot,
    dispatch,
    embed_text,
    press,
    slash,
)

TOPICS = [f"t{n:02d} " + ("*robot* _arm_ " * 20)[:190] for n in range(50)]


def test_a_long_reply_is_split_not_cut() -> None:
    """Every line arrives, in order, in messages Discord accepts; lines are never split apart."""
    lines = [f"{n}. topic: {t}" for n, t in enumerate(TOPICS, 1)] + ["", "Schedule: 08:00 UTC"]
    reply = Reply(text="\n".join(lines + ["Size 5 · threshold 0.30 · threads: off"]), title="Ch")
    messages = render(reply)
    assert len(messages) > 1
    for m in messages:
        assert message_problems(payload(m)) == []
    shown = [e.description for m in messages for e in m.embeds]
    assert "\n".join(shown) == safe(reply.text)
    assert messages[0].embeds[0].title == "Ch"


def test_a_line_over_the_limit_is_split_outside_an_escape() -> None:
    """A single line longer than an embed is split, and no piece ends in a lone backslash."""
    text = safe("a*" * 3000)  # 'a\\*' repeated: a backslash every third character
    pieces = chunks(text)
    assert "".join(pieces) == text and all(len(p) <= 4096 for p in pieces)
    for p in pieces:
        assert (len(p) - len(p.rstrip("\\"))) % 2 == 0, p[-5:]


@pytest.mark.parametrize("snippet", [10, 1200])
def test_a_long_search_header_is_split_and_its_papers_and_pager_stay_together(snippet) -> None:
    """A search whose note runs past 4,096 characters: every line arrives (the count and page
    last, on the message with the papers and the pager, which a page turn edits)."""
    note = [f"No paper mentions 'w{n}' *or* 'x{n}' " + "y" * 150 for n in range(60)]
    text = "\n".join([*note, "12 papers match; page 1 of 3."])
    cards = tuple(
        Card(f"p{n}", f"Title {n}", None, "A. Author", "V", "s" * snippet, why="w" * 300)
        for n in range(4)
    )
    pager = (Action("page", "Next ▶", "0123456789abcdef:2", page=2),)
    messages = render_paged(Reply(text=text, title="🔎 words", cards=cards, actions=pager))
    assert len(messages) > 1
    for m in messages:
        assert message_problems(payload(m)) == []
    *lead, paged = messages
    shown = [e.description for m in lead for e in m.embeds] + [paged.embeds[0].description]
    assert "\n".join(shown) == rich(text)
    assert paged.embeds[0].description.endswith("page 1 of 3.")
    assert paged.paper_ids == ("p0", "p1", "p2", "p3")
    assert [b.label for b in paged.rows[-1]] == ["Next ▶"]
    assert not any(m.rows for m in lead)


@pytest.mark.asyncio
async def test_list_with_many_long_topics_keeps_its_settings(bot):
    """`/papers list`: all 50 topics and the schedule/settings lines reach the fake."""
    for t in TOPICS:
        await dispatch(bot.client, slash("subscribe", f"s{t[:3]}", text=t))
    await dispatch(bot.client, slash("list", "tl"))
    assert bot.fake.rejected == []
    sent = bot.fake.followups["tl"]
    assert len(sent) > 1
    text = "\n".join(embed_text(m) for m in sent)
    for line in ("Schedule:", "Today's digest:", "threshold", "t00", "t49"):
        assert line in text, line


@pytest.mark.asyncio
async def test_a_search_with_a_long_note_arrives_whole_through_the_fake(bot, monkeypatch):
    """A search whose note runs past 4,096 characters (here 180 words no paper uses, named one
    by one; the small test corpus finds every real word generic, so the note is added to the
    core's answer): every word, the count line and the pager reach the strict fake, and Next
    still edits the paged message."""
    from dataclasses import replace

    words = [f"'zzq{n:03d}abcdefghijklmnop'" for n in range(180)]
    note = f"No paper mentions {' or '.join(words)}."
    real = bot.app.commands.invoke

    def noted(name, ctx, args, personal=False):
        reply = real(name, ctx, args, personal)
        return replace(reply, text=f"{note}\n{reply.text}") if name == "search" else reply

    monkeypatch.setattr(bot.app.commands, "invoke", noted)
    await dispatch(bot.client, slash("search", "ls", query="diffusion models"))
    assert bot.fake.rejected == []
    sent = bot.fake.followups["ls"]
    assert len(sent) > 1
    text = "\n".join(embed_text(m) for m in sent)
    missing = [w for w in words if w.strip("'") not in text]
    assert not missing and "page 1 of" in embed_text(sent[-1]), missing[:3]  # none broken either
    nxt = button(sent[-1], "Next ▶")
    await dispatch(bot.client, press(bot.fake, sent[-1], nxt, "ls2"))
    assert bot.fake.rejected == [] and "page 2 of" in embed_text(bot.fake.originals["ls2"])
