"""APScheduler 3.x jobs: one cron job per channel in its timezone, ingest jobs, catch-up and recovery."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger

from bot.runner import DigestRunner
from digest.due import catch_up_due
from digest.models import Channel
from digest.schedule import local_day, next_due
from digest.store import Store

log = logging.getLogger(__name__)


class DueTrigger(BaseTrigger):
    """Fires exactly when ``digest.schedule.next_due`` says, so `next_due` and the scheduler agree.

    A cron trigger never fires for a local time that a DST gap skips; this one fires right after
    the gap.
    """

    def __init__(self, channel: Channel) -> None:
        self.hhmm, self.weekdays, self.tz = channel.digest_time, channel.weekdays, channel.timezone

    def get_next_fire_time(
        self, previous_fire_time: datetime | None, now: datetime
    ) -> datetime | None:
        """The first due time after the previous fire (or at/after now, the first time)."""
        start = previous_fire_time or now - timedelta(microseconds=1)
        return next_due(start, self.hhmm, self.weekdays, self.tz)

    def __str__(self) -> str:
        return f"due[{self.hhmm} {self.weekdays} {self.tz}]"


def quiet_on_shutdown(job: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """``job`` ending quietly when cancelled: at shutdown the event loop cancels a running sweep
    or digest (recovery resumes it on the next start), which is a stop, not a failure to log."""

    @functools.wraps(job)
    async def run(*args: Any) -> Any:
        try:
            return await job(*args)
        except asyncio.CancelledError:
            log.debug("%s stopped by shutdown", getattr(job, "__qualname__", job))
            return None

    return run


def digest_trigger(channel: Channel) -> DueTrigger:
    """Fire at the channel's local time on its weekdays, DST gaps and folds included."""
    return DueTrigger(channel)


class DigestScheduler:
    """Keeps one job per active channel in step with the store; several processes may share it."""

    def __init__(
        self,
        store: Store,
        runner: DigestRunner,
        grace: timedelta = timedelta(hours=12),
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        ingest: Callable[[], Awaitable[None]] | None = None,
        ingest_every: timedelta = timedelta(hours=6),
        sweep_every: timedelta = timedelta(minutes=1),
    ) -> None:
        self.store, self.runner, self.grace, self.clock = store, runner, grace, clock
        self.sweep_every = sweep_every
        self.ingest, self.ingest_every = ingest, ingest_every
        self.scheduler = AsyncIOScheduler(timezone=UTC)

    def job_id(self, channel: Channel) -> str:
        """Stable per channel, so re-syncing replaces instead of duplicating."""
        return f"digest:{channel.id}"

    def sync(self) -> int:
        """Add, replace or remove channel jobs to match the store; returns how many are active."""
        active = 0
        for channel in self.store.channels.all():
            jid = self.job_id(channel)
            if channel.paused or channel.ref.platform not in self.runner.adapters:
                if self.scheduler.get_job(jid):
                    self.scheduler.remove_job(jid)
                continue
            self.scheduler.add_job(
                quiet_on_shutdown(self.fire),
                digest_trigger(channel),
                id=jid,
                args=[channel.id],
                replace_existing=True,
                coalesce=True,  # after a stall, one run, not one per missed tick
                misfire_grace_time=int(self.grace.total_seconds()),
                max_instances=1,
            )
            active += 1
        return active

    async def fire(self, channel_id: int) -> str:
        """A channel's scheduled tick: deliver today's (local) digest."""
        channel = await asyncio.to_thread(self.store.channels.by_id, channel_id)
        if channel is None:
            return "gone"
        outcome = await self.runner.run_channel(
            channel_id, local_day(self.clock(), channel.timezone)
        )
        log.info("digest for %s: %s", channel.ref, outcome)
        return outcome

    async def catch_up(self, missing_only: bool = False) -> dict[str, str]:
        """After downtime: each channel's most recent missed digest, once, if within the grace window.

        ``missing_only`` (the periodic sweep) skips days that already have a digest, silently.
        """
        now = self.clock()
        done = {}
        for channel in await asyncio.to_thread(self.store.channels.all):
            due = catch_up_due(now, channel, self.grace)  # the rule `why` and `list` show
            if due is None:
                continue
            if missing_only and await asyncio.to_thread(
                self.store.deliveries.for_day, channel.id, due.date()
            ):
                continue
            # paused, unconnected or following nothing: no digest, and no outcome counted every
            # sweep; the runner's own rule, asked here, not copied (see DigestRunner.skipped)
            if await self.runner.skipped(channel, due.date()) is not None:
                continue
            done[str(channel.ref)] = await self.runner.run_channel(channel.id, due.date())
        return done

    async def sweep(self) -> None:
        """Every few minutes: resume lapsed claims and due retries, then any due-but-missing digest."""
        try:
            await self.runner.recover()
            await self.catch_up(missing_only=True)
        except Exception:  # noqa: BLE001 - a failed sweep (database blip) must not stop the next
            log.exception("delivery sweep failed")

    def start(self, resync_every: timedelta = timedelta(minutes=1)) -> None:
        """Start in the running event loop, with periodic resync, recovery and ingest jobs."""
        self.sync()
        self.scheduler.add_job(self.sync, "interval", seconds=resync_every.total_seconds(), id="sync",
                               replace_existing=True)  # fmt: skip
        self.scheduler.add_job(quiet_on_shutdown(self.sweep), "interval", seconds=self.sweep_every.total_seconds(),
                               id="sweep", replace_existing=True, max_instances=1,
                               coalesce=True)  # fmt: skip
        if self.ingest is not None:
            self.scheduler.add_job(quiet_on_shutdown(self.ingest), "interval", seconds=self.ingest_every.total_seconds(),
                                   id="ingest", replace_existing=True, next_run_time=self.clock())  # fmt: skip
        self.scheduler.start()

    def shutdown(self) -> None:
        """Stop without waiting for running jobs."""
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
