"""APScheduler 3.x: one timer on the earliest next due time, a periodic sweep, ingest jobs.

The cost of scheduling does not grow with the number of channels. Each channel stores when it
is next due (``channels.next_due_at``, indexed); a tick reads only the channels whose time has
come, runs their digests with bounded concurrency and moves each one's time on. A settings
change marks that one channel (the store does it), and ``poke`` asks for a tick: nothing walks
every channel, and there is no job per channel. Several processes may share the database: the
delivery claim makes each digest go out once, and every process's sweep reads the marks.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.runner import DigestRunner
from digest.due import catch_up_due
from digest.models import Channel
from digest.schedule import local_day, next_due
from digest.store import Store
from digest.store.channels import Shards

log = logging.getLogger(__name__)
#: How far a channel whose schedule names no day is put off (it is looked at again then).
NO_DAY = timedelta(days=7)


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


class DigestScheduler:
    """Runs each channel's digest when it is due: one timer and a sweep, not a job per channel."""

    def __init__(
        self,
        store: Store,
        runner: DigestRunner,
        grace: timedelta = timedelta(hours=12),
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        ingest: Callable[[], Awaitable[None]] | None = None,
        ingest_every: timedelta = timedelta(hours=6),
        sweep_every: timedelta = timedelta(minutes=1),
        concurrency: int = 16,
        shards: Shards | None = None,
    ) -> None:
        self.store, self.runner, self.grace, self.clock = store, runner, grace, clock
        self.sweep_every = sweep_every
        self.shards = shards  # this replica's Discord shards; None: all of them
        self.ingest, self.ingest_every = ingest, ingest_every
        # Digests started at once by a tick: 10,000 channels due in one minute all start within
        # it, and a slow platform holds at most this many.
        self.concurrency = max(1, concurrency)
        self.scheduler = AsyncIOScheduler(timezone=UTC)
        self._ticking = False  # a tick runs: a poke meanwhile asks it to look once more
        self._again = False

    @property
    def platforms(self) -> set[str]:
        """The platforms this process posts to: only their channels are its to run."""
        return set(self.runner.adapters)

    async def fire(self, channel_id: int) -> str:
        """Deliver a channel's digest for today (its local day) now, whatever its schedule."""
        channel = await asyncio.to_thread(self.store.channels.by_id, channel_id)
        if channel is None:
            return "gone"
        outcome = await self.runner.run_channel(
            channel_id, local_day(self.clock(), channel.timezone)
        )
        log.info("digest for %s: %s", channel.ref, outcome)
        return outcome

    async def tick(self) -> dict[str, str]:
        """Run every channel now due (a missed digest within the grace window included), then
        set the timer on the next due time; returns the outcomes by channel.

        Ticks do not overlap: one asked for while another runs makes that one look again."""
        if self._ticking:
            self._again = True
            return {}
        self._ticking = True
        done: dict[str, str] = {}
        try:
            while True:
                self._again = False
                done.update(await self._run_due())
                if not self._again:
                    break
        finally:
            self._ticking = False
        await self._arm()
        return done

    async def _run_due(self) -> dict[str, str]:
        """The channels due now, at most ``concurrency`` digests at a time."""
        now = self.clock()
        due = await asyncio.to_thread(self.store.channels.due, now, self.platforms, self.shards)
        queue: asyncio.Queue[tuple[Channel, datetime]] = asyncio.Queue()
        for item in due:
            queue.put_nowait(item)
        done: dict[str, str] = {}

        async def worker() -> None:
            while not queue.empty():
                channel, seen = queue.get_nowait()
                then = next_due(now, channel.digest_time, channel.weekdays, channel.timezone)
                try:
                    outcome = await self._due(channel, now)
                    if outcome is not None:
                        done[str(channel.ref)] = outcome
                except Exception:  # noqa: BLE001 - one channel's failure (a database blip) must
                    # not stop the others; it is looked at again by the next sweep
                    log.exception("scheduled digest for %s failed", channel.ref)
                    then = now + self.sweep_every
                try:
                    await asyncio.to_thread(
                        self.store.channels.advance, channel.id, seen, then or now + NO_DAY
                    )
                except Exception:  # noqa: BLE001 - as above: the mark stays, the sweep retries
                    log.exception("could not set the next due time of %s", channel.ref)

        await asyncio.gather(*(worker() for _ in range(min(self.concurrency, len(due)))))
        return done

    async def _due(self, channel: Channel, now: datetime) -> str | None:
        """A due channel's digest (the latest one the catch-up rule still owes), or None."""
        due = catch_up_due(now, channel, self.grace)  # the rule `why` and `list` show
        if due is None:
            return None
        if await asyncio.to_thread(self.store.deliveries.for_day, channel.id, due.date()):
            return None
        # paused, unconnected or following nothing: no digest, and no outcome counted; the
        # runner's own rule, asked here, not copied (see DigestRunner.skipped)
        if await self.runner.skipped(channel, due.date()) is not None:
            return None
        return str(await self.runner.run_channel(channel.id, due.date()))

    async def _arm(self) -> None:
        """Set the one timer on the earliest next due time (the sweep covers other processes'
        changes and anything later than it)."""
        if not self.scheduler.running:
            return
        when = await asyncio.to_thread(
            self.store.channels.next_due_time, self.platforms, self.shards
        )
        if when is None:
            return
        # At least a second ahead: a channel left due (its next time could not be written)
        # must not turn the timer into a busy loop; the sweep retries it.
        self._timer(max(when, datetime.now(UTC) + timedelta(seconds=1)))

    def _timer(self, when: datetime) -> None:
        self.scheduler.add_job(quiet_on_shutdown(self.tick), "date", run_date=when, id="due",
                               replace_existing=True, misfire_grace_time=None,
                               coalesce=True)  # fmt: skip

    def poke(self) -> None:
        """A channel's settings changed (the store marked it): look at due channels now. Cheap:
        it only asks for a tick, which reads the due channels alone."""
        if self.scheduler.running:
            self._timer(datetime.now(UTC))

    async def sweep(self) -> None:
        """Every minute: resume lapsed claims and due retries, then run what is due (marks set by
        other processes included)."""
        try:
            await self.runner.recover()
            await self.tick()
        except Exception:  # noqa: BLE001 - a failed sweep (database blip) must not stop the next
            log.exception("delivery sweep failed")

    def start(self, first_tick: bool = True) -> None:
        """Start in the running event loop: the sweep, the due timer and configured ingest.

        ``first_tick``: look at due channels at once (the caller may run its own first tick)."""
        self.scheduler.add_job(quiet_on_shutdown(self.sweep), "interval", seconds=self.sweep_every.total_seconds(),
                               id="sweep", replace_existing=True, max_instances=1,
                               coalesce=True)  # fmt: skip
        if self.ingest is not None:
            self.scheduler.add_job(quiet_on_shutdown(self.ingest), "interval", seconds=self.ingest_every.total_seconds(),
                                   id="ingest", replace_existing=True, next_run_time=self.clock())  # fmt: skip
        self.scheduler.start()
        if first_tick:
            self._timer(datetime.now(UTC))

    def shutdown(self) -> None:
        """Stop without waiting for running jobs."""
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
