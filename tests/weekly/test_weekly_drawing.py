"""The weekly picture's words as drawn: every legend and title character has a glyph in the
picture's font (no empty box for 👍), one week reads "the week of 30 Nov 2026", the title names
the channel ("#lab", not "console:lab"), and a long legend label is cut at a word boundary.

Breaks that turn these red: `drawable` not applied to legend labels (the 👍 of "your 👍 papers"
is drawn as an empty box: no glyph); `span` without its one-week case ("weeks of 30 Nov – 30
Nov 2026"); the title built from `str(channel.ref)` again; `_short` cutting at a fixed
character ("reinforcement learning from hu…")."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

from digest.models import ChannelRef
from digest.weekly.chart import _font, _short, figure
from digest.weekly.picture import WeeklyPictures, shown_name
from digest.weekly.stats import WeeklyStats

MONDAY = date(2026, 11, 30)


def stats(weeks: int = 1, **interests: int) -> WeeklyStats:
    days = tuple(MONDAY - timedelta(weeks=w) for w in range(weeks - 1, -1, -1))
    per = {k.replace("_", " "): (n,) * weeks for k, n in interests.items()}
    return WeeklyStats(days, per, (1,) * weeks, (0,) * weeks)


def test_the_legend_and_title_have_a_glyph_for_every_character():
    s = WeeklyStats((MONDAY,), {"your 👍 papers": (3,), "graph neural networks": (2,)}, (1,), (0,))
    fig = figure(s, "Weekly picture for #lab 👍, the week of 30 Nov 2026")
    top = fig.axes[0]
    labels = [t.get_text() for t in top.get_legend().get_texts()]
    assert "your liked papers (3)" in labels
    font = _font()
    for text in [*labels, fig.get_suptitle()]:
        missing = [c for c in text if not c.isspace() and not font.get_char_index(ord(c))]
        assert missing == [], (text, missing)


def test_one_week_reads_the_week_of():
    assert stats(1, a=1).span() == "the week of 30 Nov 2026"
    assert stats(3, a=1).span() == "weeks of 16 Nov – 30 Nov 2026"
    across = WeeklyStats((date(2025, 12, 29), date(2026, 1, 5)), {"a": (1, 1)}, (0, 0), (0, 0))
    assert across.span() == "weeks of 29 Dec 2025 – 5 Jan 2026"


def test_a_long_label_is_cut_at_a_word_boundary():
    label = "reinforcement learning from human feedback for agents"
    cut = _short(label)
    assert cut == "reinforcement learning from…" and len(cut) <= 32
    assert label.startswith(cut.removesuffix("…") + " ")
    assert _short("supercalifragilisticexpialidociousness-and-more").endswith("…")
    assert _short("short topic") == "short topic"


def test_the_title_names_the_channel(store, corpus_records):
    from tests.weekly.test_weekly_picture import seed

    store.papers.upsert(corpus_records[:20])
    ch = replace(seed(store, ChannelRef("console", "lab")), name=None)  # as `run` makes it
    assert shown_name(ch) == "#lab"
    pic = WeeklyPictures(store).picture(ch, MONDAY - timedelta(weeks=1))
    assert pic is not None and "console:lab" not in pic.title and "#lab" in pic.title
