"""The reading group against a prankster colleague and a hostile platform: forged vote
buttons (a poll id too big for the database, a digit Python reads but int() refuses, another
channel's poll from a channel the bot never set up), a vote after the group was switched off,
and a paper title carrying Slack broadcast tokens in the thread posts."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest

from bot.adapters.console import ConsoleAdapter
from digest.ingest.parse import make_record
from digest.models import ChannelRef
from tests.fakes.slack import FakeSlack
from tests.reading.support import CLOSE, MEETING, OPEN, RECAP, REMIND, cmd, setup_group, sweep
from tests.reading.test_reading_platforms import SLACK, slack_poster

LAB = ChannelRef("console", "lab")


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")
        yield fake


def console() -> dict:
    return {"console": ConsoleAdapter(out=io.StringIO())}


@pytest.mark.parametrize("poll", ["99999999999999999999999", "2147483648", "²"])
def test_a_forged_poll_id_gets_a_short_error_not_an_internal_one(app, poll):
    """Broke: a poll id over the database's integer ("Something went wrong on our side", a
    logged traceback), and "²" (isdigit() is true, int() raises ValueError)."""
    a, _, _ = setup_group(app, LAB)
    sweep(app, console(), OPEN)
    reply = cmd(app, LAB, f"reading-group vote {a} {poll}")
    assert reply.error and reply.ephemeral and "names no poll" in reply.text


def test_a_vote_forged_from_a_channel_without_a_digest_is_refused(app):
    """Broke: from a channel the bot has no record of, any poll id was accepted (the check
    that the poll is the channel's was skipped when the channel was unknown), so a forged
    button from anywhere voted in another channel's poll."""
    a, _, _ = setup_group(app, LAB)
    sweep(app, console(), OPEN)
    poll = app.store.reading.poll_for(app.store.channels.get(LAB).id, MEETING.date())
    reply = cmd(app, ChannelRef("console", "elsewhere"), f"reading-group vote {a} {poll.id}", "m")
    assert reply.error and "not one of this channel's" in reply.text
    reply = cmd(app, ChannelRef("slack", "C9", "T9"), f"reading-group vote {a} {poll.id}", "m")
    assert reply.error
    assert app.store.reading.votes(poll.id) == []


def test_a_vote_after_the_group_was_switched_off_is_refused(app):
    """Broke: the poll's buttons still answered "Your vote: …" after `reading-group off`,
    though no pick is announced while the group is off."""
    a, _, _ = setup_group(app, LAB)
    sweep(app, console(), OPEN)
    poll = app.store.reading.poll_for(app.store.channels.get(LAB).id, MEETING.date())
    assert not cmd(app, LAB, f"reading-group vote {a} {poll.id}", "u1").error
    assert not cmd(app, LAB, "reading-group off", at=OPEN + timedelta(hours=1)).error
    for text in (f"reading-group vote {a} {poll.id}", f"reading-group vote {a}"):
        late = cmd(app, LAB, text, "u2", OPEN + timedelta(hours=2))
        assert late.error and "no reading group" in late.text
    assert app.store.reading.votes(poll.id) == [("u1", a)]


def test_a_pick_titled_with_broadcast_tokens_still_gets_its_thread_on_slack(app, slack):
    """Broke: the thread posts put the pick's title raw into their Slack header, so a title
    with `<!channel>` would ping the channel (the strict fake refuses it as invalid_blocks:
    the thread opening, reminder and recap all failed); a 300-character title must still fit
    the header's 150 characters once escaped."""
    title = "<!channel> <!here> <@&55> & " + "W" * 300
    app.store.papers.upsert(
        [make_record(source="jsonl", id="evil-1", title=title, abstract="diffusion models")]
    )
    cmd(app, SLACK, "/papers subscribe diffusion models", at=OPEN - timedelta(days=3))
    cmd(app, SLACK, "reading-group on thu 15:00 Europe/Berlin", at=OPEN - timedelta(days=3))
    assert not cmd(app, SLACK, "nominate evil-1", at=OPEN - timedelta(days=1)).error
    adapters = {"slack": slack_poster(slack)}
    sweep(app, adapters, OPEN)
    assert not cmd(app, SLACK, "reading-group vote evil-1", "U9").error
    for at in (CLOSE, REMIND, RECAP):
        assert all(v.startswith("posted") for v in sweep(app, adapters, at).values())
    msgs = slack.arrived("C1")
    assert len(msgs) == 5 and slack.refusals == []
    header = msgs[2]["blocks"][0]["text"]["text"]
    assert header.startswith("&lt;!channel&gt;") and len(header) <= 150


def test_the_meeting_cannot_move_while_its_poll_is_out(app):
    """Broke: `on fri 16:00` while Thursday's poll was open dropped that poll and its votes
    (a second poll with the same candidates followed, then "Nobody voted"); `on thu 18:00`
    posted the pick, reminder and recap at the new times naming 15:00. Now the change is
    refused until the recap has gone, the same setting is accepted, and after the recap the
    new time holds."""
    a, _, _ = setup_group(app, LAB)
    sweep(app, console(), OPEN)
    cmd(app, LAB, f"reading-group vote {a}", "m")
    for change in ("reading-group on fri 16:00", "reading-group on thu 18:00"):
        reply = cmd(app, LAB, change, at=CLOSE)
        assert reply.error and "poll is out" in reply.text and "Thu 10 Dec 15:00" in reply.text
    assert not cmd(app, LAB, "reading-group on thu 15:00 Europe/Berlin", at=CLOSE).error
    channel = app.store.channels.get(LAB)
    poll = app.store.reading.poll_for(channel.id, MEETING.date())
    assert [v for _, v in app.store.reading.votes(poll.id)] == [a]
    group = app.store.reading.group(channel.id)
    assert (group.weekday, group.at) == (3, "15:00")
    assert not cmd(app, LAB, "reading-group on fri 16:00", at=RECAP).error
    assert app.store.reading.group(channel.id).at == "16:00"
