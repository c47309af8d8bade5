"""Discord shows a message's button rows below all its embeds, so each row names its paper: every
button of a paper's row ends in '#n', the number its embed title starts with ('n. Title').

Seen: a five-paper digest showed five identical rows of 👍 / 👎 / More like this under the five
embeds, and nothing said which row was whose (a search page, which skips papers without buttons,
even put a row under the wrong paper's place). The custom_ids stay as before, so buttons on
messages posted before the labels still vote (tests/adapters/discord/test_discord_app.py presses them).

Breaks that turn these red (each tried): card_row() ignoring the number (labels '👍' again);
render() numbering each message's papers from 1 (the second message's say 1..3, not 6..8); ranked() leaving unranked cards unnumbered (the
"which paper?" DM's rows say nothing); numbered() cutting the number off a long label.
"""

from __future__ import annotations

import re

import discord
import pytest

from bot.adapters.discord.embeds import MAX_LABEL, numbered, render, render_one
from bot.adapters.discord.limits import message_problems
from bot.adapters.discord.poster import payload
from bot.commands.reactions import which_paper
from bot.commands.replies import Action, Card, Reply
from tests.adapters.discord.test_discord_posting import DAY, channel, run, runner
from tests.fakes.discord import FakeDiscord

NUMBER = re.compile(r"^(\d+)\. ")


def shown_rows(message: dict) -> list[tuple[int, list[dict], str]]:
    """(number in the paper's embed title, its row's buttons, its paper id) for each paper row,
    pairing a row with its embed by the paper the row's vote button carries."""
    papers = {
        e["footer"]["text"].split(" · ")[0]: int(m.group(1))
        for e in message["embeds"]
        if (m := NUMBER.match(e.get("title") or ""))
    }
    out = []
    for row in message.get("components", []):
        buttons = row["components"]
        ids = [b["custom_id"].rsplit(":", 1)[1] for b in buttons if "custom_id" in b]
        if ids and ids[0] in papers:
            out.append((papers[ids[0]], buttons, ids[0]))
    return out


@pytest.fixture
def fake(monkeypatch):
    with FakeDiscord() as f:
        monkeypatch.setattr(discord.http.Route, "BASE", f.base)
        yield f


def test_each_digest_row_names_the_paper_its_embed_numbers(app, fake):
    """An 8-paper digest (two messages of papers): row i of a message reads '👍 #n', '👎 #n',
    'More like #n' where n starts embed i's title, numbering on across messages; the custom_ids
    are the ones buttons always had."""
    ch = channel(app)
    app.channels.settings.set_size(ch.ref, "8")
    assert run(app, fake, lambda p: runner(app, p).run_channel(ch.id, DAY)) == "posted 8 papers"
    assert fake.rejected == []
    seen = []
    for message in fake.posts("111"):
        titles = [
            int(m.group(1)) for e in message["embeds"] if (m := NUMBER.match(e.get("title") or ""))
        ]
        rows = shown_rows(message)
        assert [n for n, _, _ in rows] == titles  # row i is embed i's paper
        for n, buttons, paper in rows:
            assert [b["label"] for b in buttons] == [f"👍 #{n}", f"👎 #{n}", f"More like #{n}"]
            assert [b["custom_id"] for b in buttons] == [f"dv:{k}:{paper}" for k in "udm"]
        seen += titles
    assert seen == list(range(1, 9))


def _card(n: int, rank: int | None, links: bool = True) -> Card:
    acts = (
        (
            Action("link", "PDF", url=f"https://arxiv.org/pdf/{n}"),
            Action("link", "arXiv", url=f"https://arxiv.org/abs/{n}"),
        )
        if links
        else ()
    )
    return Card(f"p{n}", f"Paper {n}", None, "A. Author", "V", "s", rank=rank, actions=acts)


def test_a_search_page_labels_its_link_rows_even_when_a_paper_has_none() -> None:
    """A search page (papers 11-16, the second without links so without a row): the rows read
    'PDF #11 / arXiv #11', then '#13', not '#12'; the strict validator accepts the message."""
    cards = tuple(_card(n, n, links=n != 12) for n in range(11, 17))
    pager = (Action("page", "Next ▶", "0123456789abcdef:3", page=3),)
    m = render_one(Reply(text="16 papers match; page 2 of 3.", cards=cards, actions=pager))
    assert message_problems(payload(m)) == []
    assert [e.title for e in m.embeds[1:]] == [f"{n}. Paper {n}" for n in range(11, 17)]
    *rows, paging = m.rows
    assert [[b.label for b in r] for r in rows] == [
        [f"PDF #{n}", f"arXiv #{n}"] for n in (11, 13, 14, 15)
    ]
    assert [b.label for b in paging] == ["Next ▶"]


def test_the_which_paper_dm_numbers_its_unranked_papers() -> None:
    """The "which paper?" DM's cards carry no rank: they are numbered 1, 2, 3 in their titles
    and rows ('👎 this one' reads '👎 #2'), and the votes keep naming the channel."""
    from tests.adapters.slack.test_slack_blocks import digest

    papers = [i.paper for i in digest(4).items[1:]]  # paper 0's id is too long for a vote
    (m,) = render(which_paper(app_channel(), papers, -1))
    assert message_problems(payload(m)) == []
    assert [e.title.split(" ")[0] for e in m.embeds[1:]] == ["1.", "2.", "3."]
    for n, (row, p) in enumerate(zip(m.rows, papers, strict=True), 1):
        votes = [b for b in row if b.custom_id]
        assert [b.label for b in votes] == [f"👎 #{n}"] and all(
            b.label.endswith(f" #{n}") for b in row
        )
        assert votes[0].custom_id == f"dv:d@9:{p.id}"


def app_channel():
    """A channel with an id, as which_paper needs (only its id is used)."""
    from types import SimpleNamespace

    return SimpleNamespace(id=9)


def test_a_long_label_keeps_its_number() -> None:
    """A label is cut to Discord's 80 characters before the number, never the number itself."""
    label = numbered("Code " + "x" * 200, 17)
    assert len(label) == MAX_LABEL and label.endswith("… #17")
    assert numbered("More like this", 3) == "More like #3"
    assert numbered("👍", None) == "👍"
