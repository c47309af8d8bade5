"""The reading group's defined outcomes (a tie, no candidates, no votes, a paused channel),
its timeline in the meeting's zone, and short private errors for bad input."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pytest

from bot.adapters.console import ConsoleAdapter
from digest.errors import DigestError
from digest.models import ChannelRef, DeliveryKind, DeliveryState
from digest.reading.schedule import Timeline, meetings, next_meeting, parse_weekday
from digest.reading.service import NO_VOTES, NONE, PICKED, TIE, tally
from tests.reading.support import CLOSE, MEETING, OPEN, RECAP, REMIND, cmd, post, setup_group, sweep

LAB = ChannelRef("console", "lab")


def adapters(out: io.StringIO) -> dict:
    return {"console": ConsoleAdapter(out=out)}


def test_tally_rules():
    """Most votes win; a tie goes to the candidate listed first; no votes, no candidates pick
    nothing. Break tried: a tie going to the last listed (max over reversed: red)."""
    assert tally(("a", "b"), [("u1", "b"), ("u2", "b"), ("u3", "a")]) == (PICKED, "b", [])
    assert tally(("a", "b", "c"), [("u1", "c"), ("u2", "b")]) == (TIE, "b", ["b", "c"])
    assert tally(("a", "b"), []) == (NO_VOTES, None, [])
    assert tally((), [("u1", "x")]) == (NONE, None, [])
    assert tally(("a",), [("u1", "gone")]) == (NO_VOTES, None, [])  # a vote for no candidate


def test_the_week_in_the_meetings_zone_across_dst():
    """Thursday 15:00 Berlin is 14:00 UTC in winter and 13:00 UTC in summer; each post's window
    follows the meeting. Break tried: windows computed in UTC (the summer meeting an hour
    late: red)."""
    winter = next_meeting(datetime(2026, 12, 7, tzinfo=UTC), 3, "15:00", "Europe/Berlin")
    assert winter.meeting.astimezone(UTC) == MEETING
    summer = next_meeting(datetime(2026, 7, 1, tzinfo=UTC), 3, "15:00", "Europe/Berlin")
    assert summer.meeting.astimezone(UTC) == datetime(2026, 7, 2, 13, 0, tzinfo=UTC)
    tl = Timeline(winter.meeting)
    assert tl.due(OPEN) == [DeliveryKind.RG_POLL]
    assert tl.due(CLOSE) == [DeliveryKind.RG_PICK, DeliveryKind.RG_THREAD]
    assert tl.due(REMIND) == [DeliveryKind.RG_PICK, DeliveryKind.RG_THREAD, DeliveryKind.RG_REMIND]
    assert tl.due(RECAP) == [DeliveryKind.RG_RECAP]
    assert tl.due(RECAP + timedelta(hours=12)) == []
    assert [m.day for m in meetings(RECAP, 3, "15:00", "Europe/Berlin")] == [
        MEETING.date(),
        MEETING.date() + timedelta(days=7),
    ]
    assert parse_weekday("Thursday") == parse_weekday("thu") == 3
    with pytest.raises(DigestError):
        parse_weekday("someday")


def test_a_tie_goes_to_the_earliest_nominated_and_the_announcement_says_so(app):
    a, b, _ = setup_group(app, LAB)
    out = io.StringIO()
    sweep(app, adapters(out), OPEN)
    assert not cmd(app, LAB, f"reading-group vote {b}", "u1").error
    assert not cmd(app, LAB, f"reading-group vote {a}", "u2").error
    sweep(app, adapters(out), CLOSE)
    text = out.getvalue()
    first = app.store.papers.get(a)
    assert f"We read {first.title} (1 vote of 2; tied with" in text
    assert "the tie goes to the paper listed first on the poll" in text


def test_no_votes_means_no_pick_and_no_thread(app):
    setup_group(app, LAB)
    out = io.StringIO()
    sweep(app, adapters(out), OPEN)
    done = sweep(app, adapters(out), CLOSE)
    assert list(done.values()) == ["posted the reading group's rg-pick"]
    assert "Nobody voted, so there is no pick" in out.getvalue()
    assert sweep(app, adapters(out), REMIND) == {} and sweep(app, adapters(out), RECAP) == {}
    assert post(app, LAB, DeliveryKind.RG_THREAD) is None
    assert app.store.reading.nominations(app.store.channels.get(LAB).id)  # kept for next week


def test_no_candidates_says_so_and_nothing_follows(app):
    cmd(app, LAB, "/papers subscribe diffusion models", at=OPEN - timedelta(days=3))
    cmd(app, LAB, "reading-group on thu 15:00 Europe/Berlin", at=OPEN - timedelta(days=3))
    out = io.StringIO()
    sweep(app, adapters(out), OPEN)
    assert "no candidates this week" in out.getvalue()
    done = sweep(app, adapters(out), CLOSE)
    assert list(done.values()) == ["nothing to send"]
    assert post(app, LAB, DeliveryKind.RG_PICK).status == DeliveryState.EMPTY
    assert sweep(app, adapters(out), REMIND) == {}


def test_a_paused_channel_gets_nothing_and_says_why(app):
    """Break tried: the runner not re-reading the channel before a post (the poll posted while
    paused: red)."""
    setup_group(app, LAB)
    cmd(app, LAB, "pause", at=OPEN - timedelta(hours=1))
    out = io.StringIO()
    done = sweep(app, adapters(out), OPEN)
    assert out.getvalue() == ""
    assert list(done.values())[0].startswith("paused")
    assert post(app, LAB, DeliveryKind.RG_POLL).status == DeliveryState.FAILED
    assert sweep(app, adapters(out), CLOSE) == {}  # no poll, so no pick
    state = cmd(app, LAB, "reading-group", at=CLOSE)
    assert "This week's poll was not posted: paused" in state.text


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("reading-group on someday 15:00", "Unknown weekday"),
        ("reading-group on thu 25:61", "Time must look like"),
        ("reading-group on thu 15:00 Mars/Olympus", "Unknown time zone"),
        ("reading-group on thu", "Say when it meets"),
        ("reading-group sometimes", "Use `/papers reading-group on"),
        ("nominate no-such-paper", "no-such-paper"),
        ("nominate", "Nominate one paper"),
        ("reading-group vote x", "No reading-group poll is open"),
        ("me reading-group", "channel's"),
    ],
)
def test_bad_input_gets_a_short_private_error(app, text, says):
    cmd(app, LAB, "/papers subscribe diffusion models", at=OPEN - timedelta(days=3))
    cmd(app, LAB, "reading-group on thu 15:00 Europe/Berlin", at=OPEN - timedelta(days=3))
    reply = cmd(app, LAB, text)
    assert reply.error and reply.ephemeral and says in reply.text
    assert len(reply.text) < 200 and "Traceback" not in reply.text


def test_a_vote_on_a_closed_poll_or_for_a_paper_not_on_it_is_refused(app):
    a, _, _ = setup_group(app, LAB)
    sweep(app, adapters(io.StringIO()), OPEN)
    poll = app.store.reading.poll_for(app.store.channels.get(LAB).id, MEETING.date())
    other = sorted(app.store.papers.recent_ids(20))[10]
    wrong = cmd(app, LAB, f"reading-group vote {other} {poll.id}")
    assert wrong.error and "not on this week's poll" in wrong.text
    closed = cmd(app, LAB, f"reading-group vote {a} {poll.id}", at=CLOSE)
    assert closed.error and "closed" in closed.text
    assert app.store.reading.votes(poll.id) == []


def test_help_lists_the_commands(app):
    text = cmd(app, LAB, "help").text
    assert "/papers reading-group" in text and "/papers nominate <id>" in text
