"""The reading group's week end to end on the console: settings, nominations, the poll, votes
(moved, refused once closed), the pick announced with its card, its thread, the reminder and
the recap, each posted once through the ledger; history and the BibTeX export."""

from __future__ import annotations

import io
from datetime import timedelta

from bot.adapters.console import ConsoleAdapter
from digest.models import ChannelRef, DeliveryKind, DeliveryState
from tests.reading.support import (
    CLOSE,
    MEETING,
    OPEN,
    RECAP,
    REMIND,
    cmd,
    post,
    setup_group,
    sweep,
)

LAB = ChannelRef("console", "lab")


def console(tmp_path, out: io.StringIO) -> dict:
    return {"console": ConsoleAdapter(out=out, transcript=tmp_path / "transcript.txt")}


def test_a_week_of_the_reading_group_on_the_console(app, tmp_path):
    """Breaks tried: a changed vote not moved (the vote's upsert made ON CONFLICT DO NOTHING:
    the other paper is picked, red); the pick not waiting for the poll's close (its window
    starting when the poll opens: announced in the poll's sweep, red)."""
    a, b, c = setup_group(app, LAB)
    out = io.StringIO()
    adapters = console(tmp_path, out)
    assert sweep(app, adapters, OPEN - timedelta(hours=1)) == {}  # before the poll opens
    done = sweep(app, adapters, OPEN)
    assert list(done.values()) == ["posted the reading group's rg-poll"]
    poll_text = out.getvalue()
    assert "Reading group poll for Thu 10 Dec 15:00 Europe/Berlin" in poll_text
    for pid in (a, b, c):
        assert f"/papers reading-group vote {pid}" in poll_text
    assert poll_text.index(a) < poll_text.index(b) < poll_text.index(c)  # nominations first
    assert "nominated by @ann" in poll_text and "👍 ×1 this week" in poll_text

    poll = app.store.reading.poll_for(app.store.channels.get(LAB).id, MEETING.date())
    assert cmd(app, LAB, f"reading-group vote {a} {poll.id}", "ann").text.startswith("Your vote")
    assert not cmd(app, LAB, f"reading-group vote {b} {poll.id}", "bea").error
    assert not cmd(app, LAB, f"reading-group vote {a}", "cy").error  # the open poll
    moved = cmd(app, LAB, f"reading-group vote {b} {poll.id}", "cy")
    assert "moved from your earlier vote" in moved.text
    state = cmd(app, LAB, "reading-group")
    assert "3 votes" in state.text and "Thursday at 15:00 Europe/Berlin" in state.text

    assert sweep(app, adapters, CLOSE - timedelta(minutes=5)) == {}  # still open
    out.truncate(0)
    out.seek(0)
    done = sweep(app, adapters, CLOSE)
    assert sorted(done.values()) == [
        "posted the reading group's rg-pick",
        "posted the reading group's rg-thread",
    ]
    text = out.getvalue()
    picked = app.store.papers.get(b)
    assert f"We read {picked.title} (2 votes of 3)" in text
    assert "TL;DR: " in text and "SynthConf 2025 · " + b in text  # the paper's card
    assert "↳ in the thread of console:rg-pick-" in text and "Discussion thread for" in text
    late = cmd(app, LAB, f"reading-group vote {a} {poll.id}", "dan", CLOSE)
    assert late.error and "closed" in late.text

    out.truncate(0)
    out.seek(0)
    assert list(sweep(app, adapters, REMIND).values()) == ["posted the reading group's rg-remind"]
    assert "Reading group in one hour" in out.getvalue() and "│" in out.getvalue()
    assert list(sweep(app, adapters, RECAP).values()) == ["posted the reading group's rg-recap"]
    assert "Voted (3): @ann, @bea, @cy" in out.getvalue()
    assert sweep(app, adapters, RECAP + timedelta(minutes=5)) == {}  # each once
    for kind in DeliveryKind:
        if kind.value.startswith("rg-"):
            assert post(app, LAB, kind).status == DeliveryState.POSTED
    transcript = (tmp_path / "transcript.txt").read_text().splitlines()
    assert len(transcript) == 5 == len(set(transcript))

    history = cmd(app, LAB, "reading-group history", at=RECAP)
    assert picked.title in history.text and "2 votes of 3" in history.text
    export = cmd(app, LAB, "reading-group export", at=RECAP)
    assert export.attachment[0] == "digestbot-reading-group.bib"
    assert export.attachment[1].count("@") == 1 and picked.title.split()[0] in export.attachment[1]
    # the nomination was read: next week's candidates hold the other one, not the pick
    assert cmd(app, LAB, f"nominate {b}", "ann", RECAP).error
