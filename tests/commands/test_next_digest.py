"""`why`, `list` and `channels` name the digest the scheduler will really send next.

Repro: a channel scheduled 09:00, set up at 12:20 with nothing delivered today, inside the
catch-up grace: `run` delivers today's at once, but all three said tomorrow. Breaks tried on
purpose (each turned a test red):
- `digest.delivery.due.upcoming` starting from `next_due` only (the catch-up ignored: the old bug);
- `DigestScheduler.tick` applying another grace than the one `next_digest` is given;
- `upcoming` not skipping a day that already has a digest.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from bot.cli.channels import channels_cmd
from bot.commands.core import Context
from tests.runtime import test_scheduler
from tests.runtime.test_scheduler import make

lab = test_scheduler.lab  # the same channel fixture
MONDAY_1220_BERLIN = datetime(2026, 11, 30, 11, 20, tzinfo=UTC)
EVENING = datetime(2026, 11, 30, 22, 30, tzinfo=UTC)  # 13.5 h after the 09:00 tick


def scheduled_day(app, now: datetime, grace_hours: float) -> str | None:
    """The day the scheduler's catch-up delivers at ``now`` (None: nothing)."""
    sched, adapter = make(app, now, grace_hours)
    asyncio.run(sched.tick())
    keys = adapter.keys()  # RecordingAdapter.keys(): the digest keys it printed
    days = {k.split("-", 2)[2][:10] for k in keys}
    assert len(days) <= 1
    return days.pop() if days else None


@pytest.mark.parametrize(
    ("now", "grace", "expected"),
    [
        (MONDAY_1220_BERLIN, 12, "2026-11-30"),  # today's is caught up at once
        (MONDAY_1220_BERLIN, 2, "2026-12-01"),  # past a 2 h grace: tomorrow's
        (EVENING, 12, "2026-12-01"),
    ],
)
def test_next_digest_is_what_the_scheduler_sends(app, lab, now, grace, expected):
    app.channels.catchup_grace = timedelta(hours=grace)
    due = app.digests.next_digest(lab, now)
    assert due.date().isoformat() == expected
    ctx = Context(lab.ref, "u1", now=now)
    listed = app.commands.handle("list", ctx).text
    assert f"Next digest: {due:%a %d %b}" in listed, listed
    top = app.commands.handle("search diffusion models", ctx).cards[0].paper_id
    why = app.commands.handle(f"why {top}", ctx).text
    assert f"next digest, {due:%a %d %b}" in why, why
    caught = scheduled_day(app, now, grace)
    assert caught == (expected if expected == "2026-11-30" else None)
    # once today's is delivered, the next is tomorrow's everywhere
    after = app.digests.next_digest(lab, now)
    assert after.date().isoformat() == "2026-12-01"


def test_channels_cli_agrees(app, lab, monkeypatch, capsys):
    import bot.cli.channels as cli

    monkeypatch.setattr(app, "clock", lambda: MONDAY_1220_BERLIN)  # the CLI's one clock
    monkeypatch.setattr(cli, "wired", lambda db: app)
    channels_cmd()
    assert "next 2026-11-30 09:00 CET (missed: caught up at once)" in capsys.readouterr().out


def test_resume_says_when_the_next_digest_comes(app, lab):
    """`/papers resume` names the digest the scheduler will send next, as `list` does.
    Break that turns this red: resume answering "Digests resumed." alone (the old reply)."""
    ctx = Context(lab.ref, "u1", now=EVENING)
    assert not app.commands.handle("pause", ctx).error
    reply = app.commands.handle("resume", ctx)
    due = app.digests.next_digest(app.store.channels.get(lab.ref), EVENING)
    assert reply.text == f"Digests resumed. Next digest: {due:%a %d %b %H:%M %Z}.", reply.text
    assert f"Next digest: {due:%a %d %b %H:%M %Z}" in app.commands.handle("list", ctx).text
