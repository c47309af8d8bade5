"""The daily Zotero sync rides on the scheduler's existing sweep: no job or thread of its own."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from bot.cli.library import handle_console
from bot.runtime.runner import DigestRunner
from bot.runtime.scheduler import DigestScheduler
from digest.delivery.steps import Deliveries
from tests.fakes.recording import RecordingAdapter
from tests.support.corpus import synthetic_records
from tests.zotero.conftest import KEY, answers, console_ctx


def connect(app) -> None:
    reply = handle_console(app.commands, "me zotero connect", console_ctx(), ask=answers("1", KEY))
    assert not reply.error, reply.text


def test_the_sweep_syncs_each_library_a_day_after_its_last_sync(zapp, zotero_fake):
    """Breaks that turn this red: the chore not run by the sweep (or not wired in app.py); a
    library synced on every sweep (no daily gate: Zotero hit every minute); a library in
    Zotero's backoff synced anyway."""
    zotero_fake.grant(KEY, "users/1")
    connect(zapp)
    assert zapp._zotero_sync in zapp.scheduler.chores
    runner = DigestRunner(Deliveries(zapp.channels, "w1"), {"console": RecordingAdapter()})
    scheduler = DigestScheduler(runner, chores=(zapp._zotero_sync,))
    p = synthetic_records()[5]
    zotero_fake.add_item("users/1", itemType="journalArticle", title=p.title, creators=[])

    zotero_fake.arrived.clear()
    asyncio.run(scheduler.sweep())
    assert zotero_fake.arrived == []  # synced at connect: not a day yet

    conn = zapp.store.zotero.all()[0]
    day_ago = zapp.clock() - timedelta(days=1, minutes=1)
    zapp.store.zotero.set(
        conn.id, synced_at=day_ago, backoff_until=zapp.clock() + timedelta(hours=1)
    )
    asyncio.run(scheduler.sweep())
    assert zotero_fake.arrived == []  # Zotero asked us to wait

    zapp.store.zotero.set(conn.id, backoff_until=None)
    asyncio.run(scheduler.sweep())
    assert zotero_fake.arrived, "the sweep did not sync"
    personal = zapp.channels.lookup.get(console_ctx().dm)
    assert p.id in {s.text for s in zapp.channels.lookup.subscriptions(personal.id)}
    assert zapp.store.zotero.all()[0].synced_at > day_ago


def test_a_failing_chore_never_stops_the_sweep(zapp):
    """Breaks that turn this red: a chore's exception escaping sweep (the interval job dies)."""
    runner = DigestRunner(Deliveries(zapp.channels, "w1"), {"console": RecordingAdapter()})
    ran = []

    async def broken() -> None:
        raise RuntimeError("zotero down")

    async def after() -> None:
        ran.append(True)

    scheduler = DigestScheduler(runner, chores=(broken, after))
    asyncio.run(scheduler.sweep())
    assert ran == [True]
