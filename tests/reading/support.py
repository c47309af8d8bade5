"""Shared steps for the reading-group tests: a group meeting Thursday 15:00 Berlin, the
instants of its week, a sender wired as `digestbot run` wires it, and a way to run commands."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import time_machine

from bot.commands import Context
from bot.runtime.reading import ReadingSender
from digest.models import ChannelRef, DeliveryKind

#: Thursday 2026-12-10 15:00 Europe/Berlin (UTC+1) is 14:00 UTC.
MEETING = datetime(2026, 12, 10, 14, 0, tzinfo=UTC)
OPEN = MEETING - timedelta(days=2) + timedelta(minutes=1)
CLOSE = MEETING - timedelta(days=1) + timedelta(minutes=1)
REMIND = MEETING - timedelta(hours=1) + timedelta(minutes=1)
RECAP = MEETING + timedelta(hours=2, minutes=1)
DAY = MEETING.date()


def cmd(app, ref: ChannelRef, text: str, user: str = "U1", at: datetime = OPEN):
    """One typed command, by ``user``, at ``at``."""
    with time_machine.travel(at, tick=False):
        dm = ChannelRef(ref.platform, f"@{user}", ref.workspace)
        return app.commands.handle(text, Context(ref=ref, user=user, dm=dm))


def sender(app, adapters: dict, worker: str = "w1") -> ReadingSender:
    """The reading job over ``adapters`` as `digestbot run` wires it."""
    runner = app.runner_over(adapters)
    runner.deliveries.worker = worker
    return ReadingSender(app.commands.reading, runner, clock=app.clock)


def sweep(app, adapters: dict, at: datetime, worker: str = "w1") -> dict[str, str]:
    """One sweep of the reading job at ``at``."""
    with time_machine.travel(at, tick=False):
        return asyncio.run(sender(app, adapters, worker).sweep())


def setup_group(app, ref: ChannelRef) -> list[str]:
    """A channel whose group meets Thursdays 15:00 Berlin, with two nominations (ann's
    first) and a 👍 this week; the candidates' ids in poll order."""
    ids = sorted(app.store.papers.recent_ids(20))
    cmd(app, ref, "/papers subscribe diffusion models", at=OPEN - timedelta(days=3))
    reply = cmd(app, ref, "reading-group on thu 15:00 Europe/Berlin", at=OPEN - timedelta(days=3))
    assert not reply.error, reply.text
    assert not cmd(app, ref, f"nominate {ids[0]}", "ann", OPEN - timedelta(days=2)).error
    assert not cmd(app, ref, f"nominate {ids[1]}", "bea", OPEN - timedelta(days=1)).error
    ch = app.store.channels.get(ref)
    with time_machine.travel(OPEN - timedelta(days=1), tick=False):
        app.store.channels.put_feedback(ch.id, "cy", ids[2], 1)
    return ids[:3]


def post(app, ref: ChannelRef, kind: DeliveryKind):
    """The ledger's record of one reading-group post for the meeting."""
    ch = app.store.channels.get(ref)
    return app.store.deliveries.for_day(ch.id, DAY, kind)
