"""Group commit of digest confirmations (bot/runtime/group_commit.py, LedgerRepo.steps; issue 21): the
confirmations of many posting digests share one transaction of a few statements, and none is
reported to its poster before it is durable, so exactly-once holds as before.

Counted, not timed. Deliberate breaks tried (each made the named test go red):
- LedgerRepo.steps opening a transaction per step (a loop over ``engine.begin()``):
  test_a_batch_of_confirmations_is_one_transaction_of_a_few_statements (commits 12, not 1)
- LedgerRepo.steps running each statement once per step (``conn.execute`` in a loop, not one
  executemany): the same test (statements grow with the batch)
- the runner confirming each message through its own ``deliveries.steps`` call (no GroupCommit):
  test_a_ticks_digests_confirm_together (24 writes for 24 messages)
- GroupCommit answering a poster as soon as its item is queued (write-behind, the commit later):
  test_a_poster_goes_on_only_after_its_confirmation_is_committed (message 1 posted while
  message 0 was not yet confirmed for another connection)
- LedgerRepo.steps writing a step whose lease is lost (the hold's answer ignored):
  test_a_batch_of_confirmations_is_one_transaction_of_a_few_statements (the fenced-out digest
  confirmed); on PostgreSQL, the one-statement step (``_JsonStepSql.confirm_held``) answering
  every step as held, or its messages' update joined to the given rows instead of the renewed
  ones: the same test, red on PostgreSQL
- GroupCommit handing a failed batch's error to every caller in it (no item-by-item retry):
  test_one_bad_confirmation_fails_only_its_own_digest
- GroupCommit answering True for an item whose write failed (the next message posted anyway):
  test_a_process_killed_between_its_batch_and_the_commit_is_resumed_exactly_once (the killed
  worker posted every message and said "posted" with nothing of it recorded)
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta

import time_machine
from sqlalchemy import create_engine, event, select, update
from sqlalchemy.exc import OperationalError

from bot.runtime.group_commit import GroupCommit
from bot.runtime.runner import DigestRunner
from bot.runtime.scheduler import DigestScheduler
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from digest.store.deliveries import POSTED, SENDING
from digest.store.ledger import CONFIRMED, PLANNED
from digest.store.schema import DeliveryMessageRow, DeliveryRow
from tests.conftest import make_app
from tests.fakes.recording import RecordingAdapter

NINE = datetime(2026, 12, 3, 9, 0, 5, tzinfo=UTC)
TOPICS = [
    "graph neural networks",
    "diffusion models",
    "reinforcement learning",
    "sparse autoencoders",
    "federated learning",
]


def due_channels(app, n: int, name: str) -> list[ChannelRef]:
    """``n`` channels due at 09:00 UTC, set up the day before."""
    refs = [ChannelRef("console", f"{name}{i}") for i in range(n)]
    with time_machine.travel(datetime(2026, 12, 2, tzinfo=UTC), tick=False):
        for i, ref in enumerate(refs):
            app.channels.follows.add(ref, SubscriptionKind.TOPIC, TOPICS[i % len(TOPICS)])
            app.channels.settings.set_schedule(ref, "09:00", "UTC", "daily")
    return refs


class Writes:
    """Statements (an executemany counts once) and commits on an engine while active."""

    def __init__(self, engine) -> None:
        self.engine, self.statements, self.commits = engine, 0, 0
        event.listen(engine, "before_cursor_execute", self._statement)
        event.listen(engine, "commit", self._commit)

    def _statement(self, *_: object) -> None:
        self.statements += 1

    def _commit(self, *_: object) -> None:
        self.commits += 1

    def close(self) -> None:
        event.remove(self.engine, "before_cursor_execute", self._statement)
        event.remove(self.engine, "commit", self._commit)


def ledger(app, claim) -> list[str]:
    """The states of a claim's messages, in order, as stored."""
    return [m.status for m in app.store.ledger.messages(claim.delivery.id)]


def test_a_batch_of_confirmations_is_one_transaction_of_a_few_statements(db_url, tmp_path):
    """3 and then 12 digests claimed by a tick (a header and one message of papers each): all
    their headers confirmed in one ``steps`` call, then all their last messages. Each call is
    one commit, and sends as many statements for 12 digests as for 3. One digest whose lease
    another worker took meanwhile is answered False and left as it was; the others go on."""
    app = make_app(db_url, tmp_path)
    d = Deliveries(app.papers, "w1")
    runner = DigestRunner(d, {"console": RecordingAdapter()})
    ticks = DigestScheduler(runner).ticks

    def claims(n: int, name: str) -> list:
        due = [(app.store.channels.get(r), NINE.date()) for r in due_channels(app, n, name)]
        out = list(ticks.claim(due, runner.render).values())
        assert len(out) == n and all(len(c.plan) == 2 for c in out)
        return out

    def costs(batch: list, finish: bool) -> tuple[list[bool], int, int]:
        writes = Writes(app.store.engine)
        try:
            if finish:
                answers = d.steps([(c, 1, f"m1-{c.delivery.id}", None, True) for c in batch])
            else:
                answers = d.steps([(c, 0, f"m0-{c.delivery.id}", 1, False) for c in batch])
        finally:
            writes.close()
        return answers, writes.statements, writes.commits

    small, big = claims(3, "a"), claims(12, "b")
    for finish in (False, True):
        answers_small, statements_small, commits_small = costs(small, finish)
        answers_big, statements_big, commits_big = costs(big, finish)
        assert answers_small == [True] * 3 and answers_big == [True] * 12
        assert commits_small == commits_big == 1
        assert statements_small == statements_big <= 6, (statements_small, statements_big)
        if not finish:
            assert all(ledger(app, c) == [CONFIRMED, SENDING] for c in small + big)
    assert {app.store.deliveries.get(c.delivery.id).status for c in small + big} == {POSTED}

    # A lease lost meanwhile (another worker took the digest over): that step writes nothing.
    more = claims(4, "c")
    taken = more[1]
    with app.store.engine.begin() as conn:
        conn.execute(
            update(DeliveryRow)
            .where(DeliveryRow.id == taken.delivery.id)
            .values(claimed_by="w2", fence=DeliveryRow.fence + 1)
        )
    answers, _, commits = costs(more, finish=False)
    assert answers == [True, False, True, True] and commits == 1
    assert ledger(app, taken) == [SENDING, PLANNED]
    assert all(ledger(app, c) == [CONFIRMED, SENDING] for c in more if c is not taken)
    app.close()


class GatedPlatform(RecordingAdapter):
    """Holds each post of the ``gated`` message positions until ``n`` posts of that position
    wait, then lets them all through at once: ``n`` digests then confirm at the same moment."""

    def __init__(self, n: int, gated: tuple[int, ...] = (0, 1)) -> None:
        super().__init__()
        self.n, self.gated = n, gated
        self.waiting: dict[int, int] = defaultdict(int)
        self.gates: dict[int, asyncio.Event] = {}

    async def post_part(self, ref, reply, position, key, parent, degrade=False):  # noqa: ANN001
        if position in self.gated:
            gate = self.gates.setdefault(position, asyncio.Event())
            self.waiting[position] += 1
            if self.waiting[position] >= self.n:
                gate.set()
            await asyncio.wait_for(gate.wait(), timeout=30)
        return await super().post_part(ref, reply, position, key, parent, degrade)


def test_a_ticks_digests_confirm_together(app, monkeypatch):
    """12 digests of one tick posted side by side: their 24 confirmations reach the ledger in a
    few grouped writes (2 when every header and every last message arrive together), not one
    transaction each."""
    refs = due_channels(app, 12, "g")
    platform = GatedPlatform(12)
    runner = DigestRunner(Deliveries(app.papers, "w1"), {"console": platform})
    groups: list[int] = []
    steps = app.store.ledger.steps

    def counted(batch, lease_s):  # noqa: ANN001, ANN202
        groups.append(len(batch))
        return steps(batch, lease_s)

    monkeypatch.setattr(app.store.ledger, "steps", counted)
    done = asyncio.run(DigestScheduler(runner, clock=lambda: NINE, concurrency=16).tick())
    assert sorted(done) == sorted(str(r) for r in refs)
    assert all(o.startswith("posted") for o in done.values()), done
    assert len(platform.keys()) == 24 and sum(groups) == 24
    assert len(groups) <= 4, groups


def test_a_poster_goes_on_only_after_its_confirmation_is_committed(tmp_path):
    """Every commit is slowed down (0.2 s before it happens); each time a digest's message n
    reaches the platform, message n - 1 must already be confirmed for another connection, and
    the digest finished once its poster is done: what a poster is told is durable."""
    url = f"sqlite:///{tmp_path / 'app.db'}"
    app = make_app(url, tmp_path)
    refs = due_channels(app, 4, "d")
    reader = create_engine(url)
    msgs = DeliveryMessageRow.__table__

    def status(delivery_key: str, position: int) -> str:
        channel = app.store.channels.get(ChannelRef("console", delivery_key))
        with reader.connect() as conn:
            ids = select(DeliveryRow.__table__.c.id).where(
                DeliveryRow.__table__.c.channel_id == channel.id
            )
            return conn.scalar(
                select(msgs.c.status).where(
                    msgs.c.delivery_id.in_(ids.scalar_subquery()), msgs.c.position == position
                )
            )

    seen: list[tuple[str, int, str]] = []

    class Checking(RecordingAdapter):
        async def post_part(self, ref, reply, position, key, parent, degrade=False):  # noqa: ANN001
            if position > 0:
                seen.append((ref.channel_id, position, status(ref.channel_id, position - 1)))
            return await super().post_part(ref, reply, position, key, parent, degrade)

    event.listen(app.store.engine, "commit", lambda *_: time.sleep(0.2))
    platform = Checking(per_message=2)
    runner = DigestRunner(Deliveries(app.papers, "w1"), {"console": platform})
    done = asyncio.run(DigestScheduler(runner, clock=lambda: NINE, concurrency=8).tick())
    assert all(o.startswith("posted") for o in done.values()), done
    assert len(seen) >= 2 * len(refs), seen  # every digest has 3 messages or more
    assert all(state == CONFIRMED for _, _, state in seen), seen
    with reader.connect() as conn:
        states = conn.scalars(select(DeliveryRow.__table__.c.status)).all()
    assert states == [POSTED] * len(refs)
    reader.dispose()
    app.close()


def test_a_process_killed_between_its_batch_and_the_commit_is_resumed_exactly_once(tmp_path):
    """Worker A posts the headers of 3 digests together; its grouped confirmation runs its statements and
    dies before the commit (every later write of A fails too: the process is gone). A posts
    nothing more. Worker B takes the digests over once A's lease lapses, finds each header on
    the platform instead of posting it again, and posts the rest: every planned paper arrives
    once (counted on the platform's record), every digest is posted."""
    url = f"sqlite:///{tmp_path / 'app.db'}"
    a = make_app(url, tmp_path / "a")
    b = make_app(url, tmp_path / "b", records=[])
    refs = due_channels(a, 3, "k")
    platform = GatedPlatform(len(refs), gated=(0,))  # the headers go out together
    dead = {"now": False}

    def kill(*_: object) -> None:
        if dead["now"]:
            raise OperationalError("COMMIT", {}, Exception("the process was killed"))

    class Killing(RecordingAdapter):
        async def post_part(self, ref, reply, position, key, parent, degrade=False):  # noqa: ANN001
            out = await platform.post_part(ref, reply, position, key, parent, degrade)
            if len(platform.keys()) == len(refs):  # every header is out: die at the next commit
                dead["now"] = True
            return out

    event.listen(a.store.engine, "commit", kill)
    lease = timedelta(seconds=0.6)
    runner_a = DigestRunner(Deliveries(a.papers, "host-a", lease=lease), {"console": Killing()})
    done = asyncio.run(DigestScheduler(runner_a, clock=lambda: NINE).tick())
    assert all("database error" in o for o in done.values()), done
    assert [k.split("#")[1] for k in platform.keys()] == ["0"] * len(refs)  # noqa: SIM118
    for ref in refs:  # the confirmation did not survive the kill: the header is still sending
        channel = a.store.channels.get(ref)
        delivery = a.store.deliveries.for_day(channel.id, NINE.date())
        assert [m.status for m in a.store.ledger.messages(delivery.id)][0] == SENDING

    time.sleep(lease.total_seconds() + 0.2)
    runner_b = DigestRunner(Deliveries(b.papers, "host-b", lease=lease), {"console": platform})
    outcomes = asyncio.run(runner_b.recover())
    assert len(outcomes) == len(refs) and all(o.startswith("posted") for o in outcomes), outcomes
    keys = platform.keys()
    assert len(keys) == len(set(keys)), keys  # no message twice (headers found, not re-posted)
    for ref in refs:
        papers = platform.papers(ref.channel_id)
        channel = b.store.channels.get(ref)
        delivery = b.store.deliveries.for_day(channel.id, NINE.date())
        assert delivery.status == POSTED
        assert sorted(papers) == sorted(i.paper_id for i in delivery.items)  # each once
    a.close()
    b.close()


def test_one_bad_confirmation_fails_only_its_own_digest():
    """A batch whose write fails (one item the database refuses) is written again item by item:
    the refused item's caller gets the error, the others their answers, and every caller
    waiting together was in the first batch."""
    calls: list[list[str]] = []

    def write(items):  # noqa: ANN001, ANN202
        calls.append(list(items))
        if "bad" in items:
            raise OperationalError("UPDATE", {}, Exception("refused"))
        return [f"ok {i}" for i in items]

    group = GroupCommit(write, batches=1)

    async def together() -> list:
        names = ["a", "bad", "c"]
        return await asyncio.gather(*(group.submit(n) for n in names), return_exceptions=True)

    a, bad, c = asyncio.run(together())
    assert (a, c) == ("ok a", "ok c") and isinstance(bad, OperationalError)
    assert calls[0] == ["a", "bad", "c"] and sorted(map(tuple, calls[1:])) == [
        ("a",),
        ("bad",),
        ("c",),
    ]
