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
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.runtime.outcome import Kind, Outcome
from bot.runtime.runner import DigestRunner
from digest.clock import Clock, system_clock
from digest.clock.times import local_day, next_due
from digest.delivery.due import catch_up_due
from digest.delivery.steps import Claim
from digest.delivery.tick import CHUNK, Ticks
from digest.models import Channel, Shards

log = logging.getLogger(__name__)
#: How far a channel whose schedule names no day is put off (it is looked at again then).
NO_DAY = timedelta(days=7)
#: The fewest due channels a replica takes at once (smaller batches cost more per digest).
MIN_BATCH = 16
#: Batches per replica's share: small enough that replicas interleave, large enough to be bulk.
BATCHES_PER_SHARE = 4
#: A replica past its share of the due channels waits this long between further batches.
PAST_SHARE = 0.5


def shares(due: int, live: int) -> tuple[int, int]:
    """(share, batch): one replica's even part of ``due`` channels among ``live`` replicas, and
    how many it takes at once (a quarter of its share, between ``MIN_BATCH`` and ``CHUNK``)."""
    share = -(-due // max(1, live))
    return share, max(MIN_BATCH, min(CHUNK, -(-share // BATCHES_PER_SHARE)))


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
        runner: DigestRunner,
        grace: timedelta = timedelta(hours=12),
        clock: Clock = system_clock,
        ingest: Callable[[], Awaitable[None]] | None = None,
        ingest_every: timedelta = timedelta(hours=6),
        sweep_every: timedelta = timedelta(minutes=1),
        concurrency: int = 64,
        shards: Shards | None = None,
        chores: Sequence[Callable[[], Awaitable[None]]] = (),
    ) -> None:
        self.runner, self.grace, self.clock = runner, grace, clock
        self.ticks = Ticks(runner.deliveries)  # the due channels and their claims, in bulk
        self.sweep_every = sweep_every
        self.shards = shards  # this replica's Discord shards; None: all of them
        # A taken channel is due again after this if its replica died before moving it on.
        self.hold = timedelta(seconds=runner.deliveries.lease_s)
        # Periodic work riding on the sweep (Zotero's daily sync): no job or thread of its own.
        self.chores = tuple(chores)
        self.ingest, self.ingest_every = ingest, ingest_every
        # Digests posting at once: 10,000 channels due in one minute all start within it (a
        # platform answering in 50 ms), and a slow platform holds at most this many.
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
        channel = await asyncio.to_thread(self.ticks.channel, channel_id)
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
        """The channels due now, taken from the database a batch at a time (the batch sized so
        the live replicas share them out) and claimed in bulk; a batch's claims are taken while
        the one before posts, and ``concurrency`` digests post at a time.

        A batch is taken only when the one before has been handed to posters: a replica claims
        what it can post soon, so one that is slow (starved of CPU, a slow platform) takes fewer
        and does not hold claims it cannot serve before their lease lapses. Past its share of
        what was due, a replica pauses between batches, so replicas that started later get
        theirs; whatever is left (a replica died) is still taken, in the same tick."""
        now = self.clock()
        total = await asyncio.to_thread(self.ticks.count_due, now, self.platforms, self.shards)
        if not total:
            return {}
        live = await asyncio.to_thread(self.ticks.live)
        share, batch = shares(total, live)
        hold = now + self.hold
        done: dict[str, str] = {}
        posters = min(self.concurrency, total)
        # Bounded: claims are taken shortly before they are posted (their leases young).
        queue: asyncio.Queue[Claim | None] = asyncio.Queue(maxsize=batch)

        async def claimer() -> None:
            taken = 0
            try:
                while True:
                    if taken >= share:  # our share is done: let the others take theirs first
                        await asyncio.sleep(PAST_SHARE)
                    try:
                        part = await asyncio.to_thread(
                            self.ticks.take, now, self.platforms, batch, hold, self.shards
                        )
                    except Exception:  # noqa: BLE001 - a database blip: what is left stays due
                        log.exception("taking due channels failed; the next sweep tries again")
                        break
                    if not part:
                        break
                    taken += len(part)
                    for claim in await self._claim(part, now, done):
                        await queue.put(claim)
            finally:
                for _ in range(posters):
                    await queue.put(None)

        async def poster() -> None:
            while (claim := await queue.get()) is not None:
                outcome = await self.runner.deliver(claim)
                done[str(claim.digest.channel.ref)] = str(outcome)

        await asyncio.gather(claimer(), *(poster() for _ in range(posters)))
        return done

    async def _claim(
        self, part: Sequence[tuple[Channel, datetime]], now: datetime, done: dict[str, str]
    ) -> list[Claim]:
        """Claim the digests ``part`` owes (the latest one the catch-up rule still owes) in
        one batch, and move each channel's next due time on; a failed batch (a database blip)
        leaves its channels due, for the next sweep."""
        moves: dict[int, tuple[int, datetime, datetime]] = {}
        wanted: list[tuple[Channel, date]] = []
        for channel, seen in part:
            then = next_due(now, channel.digest_time, channel.weekdays, channel.timezone)
            moves[channel.id] = (channel.id, seen, then or now + NO_DAY)
            due = catch_up_due(now, channel, self.grace)  # the rule `why` and `list` show
            # paused or unconnected: no digest, and no outcome counted; the runner's own
            # rule, asked here, not copied (following nothing is left out by the claim)
            if due is None or self.runner.held(channel) is not None:
                continue
            if not self.runner.connected(channel.ref.platform):
                outcome = Outcome(f"not connected to {channel.ref.platform} yet", Kind.NOT_SENT)
                self.runner.report(channel, outcome)
                done[str(channel.ref)] = str(outcome)
                continue
            wanted.append((channel, due.date()))
        claims: dict[int, Claim] = {}
        try:
            claims = await asyncio.to_thread(self.ticks.claim, wanted, self.runner.render)
        except Exception:  # noqa: BLE001 - the store failed this batch: its channels stay due
            log.exception("claiming %d scheduled digests failed", len(wanted))
            for channel, _ in wanted:
                cid, seen, _then = moves[channel.id]
                moves[cid] = (cid, seen, now + self.sweep_every)
        try:
            await asyncio.to_thread(self.ticks.advance, list(moves.values()))
        except Exception:  # noqa: BLE001 - as above: the marks stay, the sweep retries
            log.exception("could not set the next due time of %d channels", len(moves))
        return list(claims.values())

    async def _arm(self) -> None:
        """Set the one timer on the earliest next due time (the sweep covers other processes'
        changes and anything later than it)."""
        if not self.scheduler.running:
            return
        when = await asyncio.to_thread(self.ticks.next_due_time, self.platforms, self.shards)
        if when is None:
            return
        # At least a second ahead: a channel left due (its next time could not be written)
        # must not turn the timer into a busy loop; the sweep retries it.
        self._timer(max(when, datetime.now(UTC) + timedelta(seconds=1)))

    def _timer(self, when: datetime) -> None:
        self.scheduler.add_job(
            quiet_on_shutdown(self.tick),
            "date",
            run_date=when,
            id="due",
            replace_existing=True,
            misfire_grace_time=None,
            coalesce=True,
        )

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
        for chore in self.chores:
            try:
                await chore()
            except Exception:  # noqa: BLE001 - a chore's failure never stops digests
                log.exception("sweep chore failed")

    def start(self, first_tick: bool = True) -> None:
        """Start in the running event loop: the sweep, the due timer and configured ingest.

        ``first_tick``: look at due channels at once (the caller may run its own first tick)."""
        self.scheduler.add_job(
            quiet_on_shutdown(self.sweep),
            "interval",
            seconds=self.sweep_every.total_seconds(),
            id="sweep",
            replace_existing=True,
            max_instances=1,
            coalesce=True,
            misfire_grace_time=None,  # a late sweep runs late (one, coalesced), never skipped
        )
        if self.ingest is not None:
            self.scheduler.add_job(
                quiet_on_shutdown(self.ingest),
                "interval",
                seconds=self.ingest_every.total_seconds(),
                id="ingest",
                replace_existing=True,
                misfire_grace_time=None,
                coalesce=True,
                next_run_time=self.clock(),
            )
        self.scheduler.start()
        if first_tick:
            self._timer(datetime.now(UTC))

    def shutdown(self) -> None:
        """Stop without waiting for running jobs."""
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
