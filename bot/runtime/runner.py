"""Runs digest deliveries against adapters: claim, plan, post each message, confirm; resume after
crashes and transient failures (any worker, once the lease lapses), exactly once per message."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy.exc import DBAPIError

from bot.commands.replies import Reply, digest_reply
from bot.ports import REJECTED, TRANSIENT, Adapter, PostError
from bot.runtime import stored_reply
from bot.runtime.group_commit import GroupCommit
from bot.runtime.outcome import Kind, Outcome, state_kind
from digest.channels.service import ChannelService
from digest.delivery.steps import Claim, Deliveries, PlannedMessage, retrying, slow_down
from digest.models import Channel, ChannelRef, DeliveryKind, DeliveryState, MessageState

if TYPE_CHECKING:
    from digest.clock import Clock
    from digest.delivery.compose import Digest
    from digest.reading.service import ReadingPost
    from digest.weekly.picture import Picture

#: How a weekly picture's claim is drawn: (channel, its Monday) -> the picture, or None when
#: there is nothing to send (digest/weekly/picture.py ``WeeklyPictures.for_week``).
Draw = Callable[[Channel | None, date], "Picture | None"]
#: What a reading-group post shows: (channel, kind, its meeting's day) -> the post as data, or
#: None when there is nothing to send (digest/reading/service.py ``ReadingGroups.post``).
Compose = Callable[[Channel, DeliveryKind, date], "ReadingPost | None"]

log = logging.getLogger(__name__)
LOST = Outcome("taken over by another worker", Kind.LOST)
GONE = Outcome("gone", Kind.NOT_SENT)
#: A channel that follows nothing (and has no 👍 to rank by) gets no digest at all, not an empty one.
NOTHING_FOLLOWED = "follows nothing, so no digest"
#: How far before its claim a channel's first message is looked for (no earlier message to
#: bound the lookup by the platform's clock; the database's may be the host's, minutes off).
FIRST_LOOKBACK = timedelta(hours=1)
#: Ledger writes of posting digests at once (threads and pooled connections they may hold).
WRITERS = 16
#: Transactions of grouped confirmations in flight at once (bot/runtime/group_commit.py): each holds
#: one pooled connection and writes every confirmation that arrived while the others ran. One:
#: batches twice as large, so half the transactions (10,000 due digests: ~2 CPU-s less on
#: PostgreSQL, the same start times; each confirmation still waits for its own commit).
STEP_BATCHES = 1
#: How an outcome starts when another live process holds this digest's claim (CLI exit code 3).
BUSY = "another digestbot process is sending this digest right now"


class LeaseLost(Exception):
    """Another worker holds the digest now: stop without posting or recording anything."""


class NothingToSend(Exception):
    """A weekly picture whose weeks hold nothing (or whose channel switched it off since)."""


class PlanMismatch(Exception):
    """A stored plan the digest can no longer be rendered to (planned before plans kept their
    rendering, and the channel's settings changed since): sending it would lose papers."""


@dataclass
class _Run:
    """One pass over a digest's plan: the lease-lost signal, the messages this pass marked
    sending (with the previous confirmation), the next open one, and whether it finished."""

    lost: asyncio.Event
    marked: set[int]
    finished: bool
    then: int | None = None


class DigestRunner:
    """Delivers each channel's digest once per day, through its platform's adapter."""

    def __init__(
        self,
        deliveries: Deliveries,
        adapters: dict[str, Adapter],
        on_outcome: Callable[[str, Outcome], None] | None = None,
        composing: int = 2,
        channels: ChannelService | None = None,
        pictures: Draw | None = None,
        reading: Compose | None = None,
    ) -> None:
        self.deliveries = deliveries
        # Weekly pictures go through this same runner; without a way to draw them (a runner
        # made for one digest) it leaves their claims alone.
        self.pictures = pictures
        # Reading-group posts likewise: only a runner told how to compose them takes them.
        self.reading = reading
        self.on_outcome = on_outcome  # (platform, outcome) -> None, e.g. a metrics counter
        # Finding channels and pausing one the platform refused (the app's; a plain one in tests).
        self.channels = channels or ChannelService(deliveries.papers)
        self.adapters = adapters
        # Composing is CPU work and each claim one short write: a few at a time keep the cores
        # and SQLite's one writer busy, not queued; posting (the slow part) is not held by it.
        self.composing = asyncio.Semaphore(max(1, composing))
        # Posting digests' ledger writes share a few worker threads and pooled connections:
        # 64 digests in flight must not take every thread (commands run there too) nor the pool.
        self.writing = asyncio.Semaphore(WRITERS)
        # Confirmations (the write after each post) of all posting digests, grouped: one
        # transaction for every one that arrived meanwhile, each answered after its commit.
        self.confirming = GroupCommit(self.deliveries.steps, batches=STEP_BATCHES)

    async def run_channel(self, channel_id: int, day: date) -> Outcome:
        """Deliver ``day``'s digest for a channel; returns what happened, for logs and replies."""
        channel = await asyncio.to_thread(self.channels.lookup.by_id, channel_id)
        outcome = await self._run(channel, day)
        self.report(channel, outcome)
        return outcome

    def report(self, channel: Channel | None, outcome: Outcome) -> None:
        """Count and log one digest's outcome."""
        if self.on_outcome is not None and channel is not None:
            self.on_outcome(channel.ref.platform, outcome)
        ref = channel.ref if channel else None
        log.info(
            "digest %s",
            outcome,
            extra={
                "platform": ref.platform if ref else "",
                "workspace": ref.workspace if ref else "",
                "channel": ref.channel_id if ref else "",
            },
        )

    def held(self, channel: Channel) -> Outcome | None:
        """Why ``channel`` gets no digest at all now (paused, no connection to its platform), or
        None; asked by ``skipped`` and by the scheduler's tick (which leaves those out unsaid)."""
        if channel.paused:
            return Outcome(channel.pause_state, Kind.NOT_SENT)
        if channel.ref.platform not in self.adapters:
            return Outcome(f"no {channel.ref.platform} connection", Kind.NOT_SENT)
        return None

    async def skipped(self, channel: Channel, day: date) -> Outcome | None:
        """Why ``channel`` gets no digest on ``day`` before anything is claimed (paused, no
        connection, follows nothing), or None. The one place these are checked: every run goes
        through it, and the scheduler's tick asks the same rules (``held``; following nothing
        is left out by the bulk claim, digest/delivery/tick.py), so a channel that is never sent is not
        run, logged and counted every minute."""
        if (held := self.held(channel)) is not None:
            return held
        if await asyncio.to_thread(self.channels.follows_nothing, channel, day):
            return Outcome(NOTHING_FOLLOWED, Kind.NOT_SENT)
        return None

    async def _run(self, channel: Channel | None, day: date) -> Outcome:
        if channel is None:
            return GONE
        if (skipped := await self.skipped(channel, day)) is not None:
            return skipped
        if not self.connected(channel.ref.platform):
            return Outcome(f"not connected to {channel.ref.platform} yet", Kind.NOT_SENT)
        adapter = self.adapters[channel.ref.platform]
        async with self.composing:
            claim = await asyncio.to_thread(self.deliveries.claim, channel, day)
        if claim is None:  # say what is true: delivered, retrying (when, why), being sent...
            return await asyncio.to_thread(self._not_ours, channel.id, day)
        return await self.send(claim, adapter)

    def _not_ours(self, channel_id: int, day: date) -> Outcome:
        """Why the claim went elsewhere; a live lease held by someone else is said plainly."""
        d = self.deliveries.for_day(channel_id, day)  # one snapshot: state and test agree
        state = Outcome(self.deliveries.describe(d), state_kind(d))
        if d is None or not d.status.unfinished or (d.retry_at and d.last_error):
            return state
        if self.deliveries.lapsed(d):  # its owner stopped; a sweep resumes it
            return state
        return Outcome(
            f"{BUSY} ({state}); it is posted once, by that process — `digestbot channels` shows when it is done",
            Kind.BUSY,
        )

    async def run_now(self, ref: ChannelRef, day: date) -> Outcome:
        """`/papers digest now`: today's digest immediately (and then not again today)."""
        channel = await asyncio.to_thread(self.channels.lookup.get, ref)
        return await self.run_channel(channel.id, day) if channel else GONE

    def render(self, digest: Digest) -> tuple[list[tuple[str, ...]], str, Reply]:
        """A digest as its channel's platform posts it: the messages' papers, the rendering
        stored with the plan, and the reply (for a claim taken in bulk, digest/delivery/tick.py)."""
        reply = digest_reply(digest)
        parts = self.adapters[digest.channel.ref.platform].plan(reply)
        return parts, stored_reply.dumps(reply), reply

    async def deliver(self, claim: Claim) -> Outcome:
        """Post a claim taken by the scheduler's tick, and report what happened."""
        channel = claim.digest.channel
        outcome = await self.send(claim, self.adapters[channel.ref.platform])
        self.report(channel, outcome)
        return outcome

    def connected(self, platform: str) -> bool:
        """The platform's adapter can post now (Discord: logged in); adapters without a
        ``ready`` are always ready."""
        ready = getattr(self.adapters.get(platform), "ready", None)
        return ready() if callable(ready) else platform in self.adapters

    async def send(self, claim: Claim, adapter: Adapter) -> Outcome:
        """Post every unconfirmed message of a claimed digest, in order, then record it posted.

        Never raises for one digest's sake: an error that is not the platform's fails this
        digest with a reason its channel's people can read (`list`, `digestbot channels`).
        """
        try:
            return await self._send(claim, adapter)
        except DBAPIError:  # the database, not this digest: its lease lapses, a sweep resumes it
            log.exception("digest %s interrupted by a database error", claim.key)
            return Outcome("interrupted by a database error; resumed by the next sweep", Kind.LOST)
        except Exception as exc:  # noqa: BLE001 - one digest's bug must not stop the others
            log.exception("digest %s failed", claim.key)
            reason = f"not sent because of an internal error ({type(exc).__name__}: {exc})"[:300]
            if not await asyncio.to_thread(self.deliveries.fail, claim, reason):
                return LOST
            return Outcome(f"failed: {reason}", Kind.FAILED)

    async def _send(self, claim: Claim, adapter: Adapter) -> Outcome:
        if claim.delivery.status == DeliveryState.EMPTY:
            return Outcome("empty (quiet)", Kind.SETTLED)
        if claim.fresh is None:  # a take-over, a retry or a single run: read what is stored
            channel = await asyncio.to_thread(self.channels.lookup.by_id, claim.delivery.channel_id)
            if channel is None or channel.paused:  # paused while it waited for its retry
                reason = channel.pause_state if channel else "the channel was removed"
                if not await asyncio.to_thread(self.deliveries.fail, claim, reason):
                    return LOST
                return Outcome(reason, Kind.NOT_SENT)
        try:
            # renewed while planning too: a picture is drawn then (a cold drawing process can
            # take longer than a short lease)
            async with self._renewing(claim) as lost:
                plan, reply = await self._planned(claim, adapter)
                parent = plan[0].message_ref if plan[0].status == MessageState.CONFIRMED else None
                last = None  # the platform's reference of the last message known to be there
                todo = [m.position for m in plan if m.status != MessageState.CONFIRMED]
                run = _Run(lost, set(), finished=False)
                for m in plan:
                    ref = m.message_ref
                    if m.status != MessageState.CONFIRMED:
                        after = [p for p in todo if p > m.position]
                        run.then = after[0] if after else None
                        ref = await self._deliver(claim, adapter, reply, m, parent, run, last)
                    parent = ref if m.position == 0 else parent
                    last = ref or last
            # the last message's confirmation recorded it posted; a resumed digest with every
            # message already confirmed is finished here
            if not run.finished and not await asyncio.to_thread(self.deliveries.finish, claim):
                raise LeaseLost
        except LeaseLost:
            return LOST
        except NothingToSend:
            if not await asyncio.to_thread(self.deliveries.nothing_to_send, claim):
                return LOST
            return Outcome("nothing to send" if claim.reading else "nothing to draw", Kind.SETTLED)
        except PostError as exc:
            outcome = await asyncio.to_thread(self._failed, claim, adapter.platform, exc)
            if outcome.endswith("(channel paused)"):
                await self._tell_owner(claim.digest.channel, adapter, exc.reason)
            return outcome
        if claim.picture:
            return Outcome("posted the weekly picture", Kind.POSTED)
        if claim.reading:
            return Outcome(f"posted the reading group's {claim.delivery.kind.value}", Kind.POSTED)
        return Outcome(f"posted {len(claim.digest.items)} papers", Kind.POSTED)

    async def _tell_owner(self, channel: Channel, adapter: Adapter, reason: str) -> None:
        """A channel the platform refused is paused: its owner (who set it up) hears so by
        direct message, with how to restart it, instead of finding out days later."""
        owner = channel.owner_user
        if not owner or channel.ref.personal:  # a DM digest: no one to tell
            return
        name = f"#{channel.name}" if channel.name else f"channel {channel.ref.channel_id}"
        note = Reply(
            text=f"Digests for {name} are paused: {reason}. Once that is fixed, `/papers resume` "
            "there restarts them.",
            title="Digest paused",
        )
        try:
            await adapter.send(
                ChannelRef(channel.ref.platform, f"@{owner}", channel.ref.workspace), note
            )
        except PostError as exc:  # their DMs are closed too: the pause reason still shows in `list`
            log.warning("could not tell %s that %s is paused: %s", owner, channel.ref, exc.reason)

    async def _planned(self, claim: Claim, adapter: Adapter) -> tuple[list[PlannedMessage], Reply]:
        """The digest's stored plan and the reply it renders; a claim just taken in bulk carries
        both (stored with it, in its transaction)."""
        if claim.fresh is not None and claim.plan is not None:
            return list(claim.plan), claim.reply
        if claim.reading:
            return await self._reading_planned(claim)
        if claim.picture:  # one message, the picture; drawn (in the drawing process) each try
            assert self.pictures is not None  # only a runner that draws takes pictures over
            channel = await asyncio.to_thread(self.channels.lookup.by_id, claim.delivery.channel_id)
            pic = await asyncio.to_thread(self.pictures, channel, claim.delivery.digest_date)
            if pic is None:
                raise NothingToSend
            plan = await asyncio.to_thread(self.deliveries.plan, claim, [()])
            if plan is None:
                raise LeaseLost
            return plan, Reply(text=pic.title, image=pic)
        fresh = digest_reply(claim.digest)
        plan = await asyncio.to_thread(
            self.deliveries.plan, claim, adapter.plan(fresh), stored_reply.dumps(fresh)
        )
        if plan is None:
            raise LeaseLost
        return plan, await asyncio.to_thread(self._replayed, claim, adapter, plan, fresh)

    async def _reading_planned(self, claim: Claim) -> tuple[list[PlannedMessage], Reply]:
        """A reading-group post: one message, composed the first time and stored with its
        plan, so a retry or take-over sends exactly what was planned."""
        from bot.commands.reading_replies import reading_reply

        assert self.reading is not None  # only a runner that composes them takes them over
        rendered = await asyncio.to_thread(self.deliveries.rendered, claim)
        if rendered:
            reply = stored_reply.loads(rendered)
        else:
            d = claim.delivery
            post = await asyncio.to_thread(
                self.reading, claim.digest.channel, d.kind, d.digest_date
            )
            if post is None:
                raise NothingToSend
            reply = reading_reply(post)
        plan = await asyncio.to_thread(self.deliveries.plan, claim, [()], stored_reply.dumps(reply))
        if plan is None:
            raise LeaseLost
        rendered = await asyncio.to_thread(self.deliveries.rendered, claim)
        return plan, stored_reply.loads(rendered) if rendered else reply

    def _replayed(
        self, claim: Claim, adapter: Adapter, plan: list[PlannedMessage], fresh: Reply
    ) -> Reply:
        """The reply the plan was made from, so a retry sends exactly the planned messages."""
        rendered = self.deliveries.rendered(claim)
        reply = stored_reply.loads(rendered) if rendered else fresh
        if [tuple(ids) for ids in adapter.plan(reply)] != [m.paper_ids for m in plan]:
            raise PlanMismatch("the stored plan no longer matches this digest's messages")
        return reply

    async def _deliver(
        self,
        claim: Claim,
        adapter: Adapter,
        reply: Reply,
        m: PlannedMessage,
        parent: str | None,
        run: _Run,
        last: str | None,
    ) -> str:
        """One message, exactly once: one that may have gone out is looked up before re-posting.

        Its confirmation marks the next message (``run.then``) sending in the same write, or,
        the last, records the digest posted: one write a message, not two or three, and that
        write shares its transaction with other digests' confirmations (group commit)."""
        where, key = claim.digest.channel.ref, claim.part_key(m.position)
        posted = None
        # A claim taken in bulk stores its first message as sending (for a crash after the
        # claim); this process knows it posted nothing yet, so there is nothing to look up, and
        # while its lease is young (a third of its length) no other worker can have taken it.
        first = claim.fresh is not None and m.position == 0
        young = first and time.monotonic() - claim.fresh < self.deliveries.lease_s / 3
        if m.status == MessageState.SENDING and not first:  # an earlier attempt may have
            # reached the platform
            # Bounded by the platform's own time: the message before this one (the plan's, else
            # an earlier digest's last) was stored before it was sent. A channel's very first
            # digest has none: then the channel's newest message read before posting.
            since: str | datetime | None = last or await asyncio.to_thread(
                self.deliveries.earlier_ref, claim
            )
            if not since:  # the channel's first digest: its newest message before ours
                bound = await asyncio.to_thread(self.deliveries.first_bound, claim)
                # "": the channel was empty then, so all of it came after; None: not kept
                # (the platform could not be read), the claim time less an hour.
                since = bound or (
                    None if bound == "" else claim.delivery.claimed_at - FIRST_LOOKBACK
                )
            posted = await adapter.find_part(where, reply, m.position, key, parent, since=since)
        if posted is None and m.position == 0 and not last:
            await self._keep_first_bound(claim, adapter, where)
        if posted is None:
            marked = young or m.position in run.marked  # this run's last write marked it
            if run.lost.is_set() or not (
                marked or await self._write(self.deliveries.sending, claim, m.position)
            ):
                raise LeaseLost
            try:
                posted = await adapter.post_part(where, reply, m.position, key, parent)
            except PostError as exc:
                if exc.kind != REJECTED or reply.image is not None:  # a picture has no lesser form
                    raise
                log.warning(
                    "%s refused message %s (%s); sending it degraded", where, key, exc.reason
                )
                posted = await adapter.post_part(
                    where, reply, m.position, key, parent, degrade=True
                )
        then, finish = run.then, run.then is None
        # Answered once the commit that holds it is done: only then is the next one posted.
        if not await self.confirming.submit((claim, m.position, posted, then, finish)):
            raise LeaseLost
        if then is not None:
            run.marked.add(then)
        run.finished = finish
        return posted

    async def _keep_first_bound(self, claim: Claim, adapter: Adapter, where: ChannelRef) -> None:
        """Before a channel's first message ever is posted: keep the platform's reference of the
        channel's newest message, so a lookup after a lost answer is bounded by the platform's
        own clock, not the claim time on a host clock that may be hours off. Once per digest,
        and only for a channel no earlier digest posted to (one read otherwise)."""
        latest = getattr(adapter, "latest_ref", None)
        if (
            latest is None
            or await asyncio.to_thread(self.deliveries.first_bound, claim) is not None
        ):
            return
        if await asyncio.to_thread(self.deliveries.earlier_ref, claim):
            return
        try:
            ref = await latest(where)
        except PostError as exc:  # the lookup falls back to the claim time less an hour
            log.warning("could not read %s's newest message: %s", where, exc.reason)
            return
        await asyncio.to_thread(self.deliveries.keep_first_bound, claim, ref or "")

    async def _write(self, fn: Callable[..., bool], *args: object) -> bool:
        """One ledger write in a worker thread, at most ``WRITERS`` of them at a time."""
        async with self.writing:
            return await asyncio.to_thread(fn, *args)

    @asynccontextmanager
    async def _renewing(self, claim: Claim) -> AsyncIterator[asyncio.Event]:
        """Renew the lease every third of its length while posting; the event is set if lost."""
        lost = asyncio.Event()
        every = self.deliveries.lease_s / 3
        tasks: list[asyncio.Task[None]] = []

        async def renew() -> None:
            while True:
                if not await asyncio.to_thread(self.deliveries.renew, claim):
                    lost.set()
                    return
                await asyncio.sleep(every)

        # A timer, not a task, until the first renewal is due: most digests are posted well
        # within a third of the lease, and a tick posts thousands (a task each costs more than
        # the timer's set-up and cancel).
        timer = asyncio.get_running_loop().call_later(
            every, lambda: tasks.append(asyncio.create_task(renew()))
        )
        try:
            yield lost
        finally:
            timer.cancel()
            for task in tasks:
                task.cancel()

    def _failed(self, claim: Claim, platform: str, exc: PostError) -> Outcome:
        """Transient: retry later in the grace window. Rejected (even degraded) or gone: pause."""
        channel = claim.digest.channel
        reason = (
            slow_down(platform)
            if exc.rate_limited
            else f"{platform.capitalize()} error {exc.reason}"
        )
        if not self.deliveries.renew(claim):
            return LOST
        log.warning("posting to %s failed: %s (%s)", channel.ref, reason, exc.kind)
        if exc.kind == TRANSIENT:
            when = self.deliveries.retry_later(claim, reason, exc.retry_after or 0.0)
            if when is not None:
                return Outcome(retrying(when, reason), Kind.RETRYING)
            self.deliveries.fail(claim, f"gave up after {reason}")
            return Outcome(f"failed: gave up after {reason} (grace window over)", Kind.FAILED)
        if claim.picture or claim.reading:  # a refused post does not stop the channel's digests
            self.deliveries.fail(claim, reason)
            return Outcome(f"failed: {reason}", Kind.FAILED)
        self.channels.settings.set_paused(channel.ref, True, exc.reason)
        self.deliveries.fail(claim, reason)  # unposted papers go to the next digest once resumed
        return Outcome(f"failed: {reason} (channel paused)", Kind.FAILED)

    async def recover(self) -> list[Outcome]:
        """Resume digests whose lease lapsed: crash leftovers and retries now due, exactly once.

        Only for platforms connected now (a Discord claim waits for the login); each digest on
        its own, so one that cannot be sent never holds up the others.
        """
        outcomes = []
        platforms = {p for p in self.adapters if self.connected(p)}
        kinds = {DeliveryKind.DIGEST} | ({DeliveryKind.WEEKLY} if self.pictures else set())
        if self.reading is not None:
            kinds |= {
                k for k in DeliveryKind if k not in (DeliveryKind.DIGEST, DeliveryKind.WEEKLY)
            }
        for claim in await asyncio.to_thread(self.deliveries.take_over, platforms, kinds):
            outcome = await self.send(claim, self.adapters[claim.digest.channel.ref.platform])
            self.report(claim.digest.channel, outcome)
            outcomes.append(outcome)
        return outcomes


class PostSweep:
    """A scheduler job that claims the posts owed now and has the runner send each (weekly
    pictures, reading-group posts): what is owed is the subclass's ``_sweep``; this keeps the
    job alive through shutdowns and database blips. Platform-neutral."""

    job = "post sweep"  # what a failure's log line names

    def __init__(self, runner: DigestRunner, clock: Clock) -> None:
        self.runner = runner
        self.clock = clock

    async def sweep(self) -> dict[str, str]:
        """Send every post owed now; outcomes by what was sent. Never raises (a job must go on)."""
        try:
            return await self._sweep()
        except asyncio.CancelledError:  # shutdown: a claim not yet sent is taken over later
            return {}
        except Exception:  # noqa: BLE001 - a database blip: the next sweep tries again
            log.exception("%s failed", self.job)
            return {}

    def platforms(self) -> set[str]:
        """The platforms connected now (a post for another waits for it)."""
        return {p for p in self.runner.adapters if self.runner.connected(p)}

    async def _sweep(self) -> dict[str, str]:
        raise NotImplementedError
