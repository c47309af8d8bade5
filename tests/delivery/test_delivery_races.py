"""Delivery under races: clock skew, posts slower than the lease, workers sharing a database.

Counts come from the fake platform's record (``RecordingAdapter``), never from the bot's ledger.
Deliberate breaks tried (each made the named test go red):
- take_over() comparing with the worker's clock: test_a_worker_15_minutes_ahead_does_not_post_again
- no lease renewal while posting: test_a_post_slower_than_the_lease_is_posted_once
"""

import asyncio
import json
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from digest.models import ChannelRef
from tests.delivery.test_delivery import DAY, LEASE, channel_with_topic, make_app, once_each, runner
from tests.fakes.recording import RecordingAdapter


class SlowAdapter(RecordingAdapter):
    """Posts take ``delay`` seconds; ``started`` is set when the first post is in flight."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay, self.started = delay, asyncio.Event()

    async def post_part(self, *args, **kw) -> str:
        self.started.set()
        await asyncio.sleep(self.delay)
        return await super().post_part(*args, **kw)


def _race(app, adapter, during) -> list[str]:
    """Worker A posts through ``adapter``; once its post is in flight, ``during`` runs B."""
    ch = channel_with_topic(app)
    a = runner(app, "host-a", adapter)
    b = runner(app, "host-b", adapter)

    async def scenario():
        first = asyncio.create_task(a.run_channel(ch.id, DAY))
        await adapter.started.wait()
        other = await during(b)
        return [await first, *other]

    return asyncio.run(scenario())


def test_a_worker_15_minutes_ahead_does_not_post_again(app):
    adapter = SlowAdapter(0.3)

    async def skewed(b):
        with time_machine.travel(datetime.now(UTC) + timedelta(minutes=15), tick=True):
            return await b.recover()

    assert _race(app, adapter, skewed) == ["posted 5 papers"]
    assert adapter.keys() == ["digest-1-2026-12-01#0", "digest-1-2026-12-01#1"]


def test_a_post_slower_than_the_lease_is_posted_once(app):
    adapter = SlowAdapter(3 * LEASE.total_seconds())

    async def later(b):
        out = []
        for _ in range(6):
            await asyncio.sleep(LEASE.total_seconds() / 2)
            out += await b.recover()
        return out

    assert _race(app, adapter, later) == ["posted 5 papers"]
    assert adapter.keys() == ["digest-1-2026-12-01#0", "digest-1-2026-12-01#1"]
    assert once_each(adapter)[0] and len(adapter.papers()) == 5


def test_two_workers_on_one_database_never_double_post(db_url, tmp_path):
    """Two processes' worth of engines and runners racing over 12 channels for 3 days."""
    a = make_app(db_url, tmp_path / "a")
    b = make_app(db_url, tmp_path / "b", records=[])
    topics = [
        "diffusion models",
        "graph neural networks",
        "federated learning",
        "sparse autoencoders",
    ]
    channels = [channel_with_topic(a, f"c{i}", topics[i % 4]) for i in range(12)]
    adapter_a, adapter_b = RecordingAdapter(per_message=2), RecordingAdapter(per_message=2)
    lease = timedelta(seconds=2)  # a loaded machine may stall a worker past a very short lease
    runners = [
        runner(a, "host-a", adapter_a, lease=lease),
        runner(b, "host-b", adapter_b, lease=lease),
    ]

    outcomes = []

    def work(r):
        for day in (DAY, DAY + timedelta(days=1), DAY + timedelta(days=2)):
            for ch in channels:
                outcomes.append((ch.id, day, asyncio.run(r.run_channel(ch.id, day))))

    threads = [threading.Thread(target=work, args=(r,)) for r in runners]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # A worker stalled past its lease leaves its digest to the sweep, as in a deployment: run it.
    time.sleep(lease.total_seconds() + 0.2)
    for r in runners:
        outcomes.append(("sweep", r.deliveries.worker, asyncio.run(r.recover())))
    keys = adapter_a.keys() + adapter_b.keys()
    assert len(keys) == len(set(keys))
    assert len({k.split("#")[0] for k in keys}) == 36, outcomes  # 12 channels x 3 days, once each
    for ch in channels:
        papers = adapter_a.papers(ch.ref.channel_id) + adapter_b.papers(ch.ref.channel_id)
        assert papers and len(papers) == len(set(papers))  # no paper twice to one channel
    a.close()
    b.close()


def test_two_schedulers_catching_up_on_one_database_post_each_digest_once(db_url, tmp_path):
    """Two bot processes restart after downtime at the same moment and both run catch-up."""
    from bot.runtime.scheduler import DigestScheduler

    a = make_app(db_url, tmp_path / "a")
    b = make_app(db_url, tmp_path / "b", records=[])
    channels = [channel_with_topic(a, f"s{i}", "graph neural networks") for i in range(8)]
    for ch in channels:
        a.channels.settings.set_schedule(ch.ref, "09:00", "Europe/Berlin", "daily")
    back = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)  # 10:30 in Berlin, 90 minutes late
    adapters = [RecordingAdapter(), RecordingAdapter()]
    schedulers = [
        DigestScheduler(runner(app, f"host-{n}", ad), clock=lambda: back)
        for n, (app, ad) in enumerate(zip((a, b), adapters, strict=True))
    ]
    results = [None, None]

    def work(i):
        results[i] = asyncio.run(schedulers[i].tick())

    threads = [threading.Thread(target=work, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    keys = adapters[0].keys() + adapters[1].keys()
    assert len(keys) == len(set(keys)) == 16  # header + papers, once each
    assert {k.split("#")[0] for k in keys} == {f"digest-{ch.id}-2026-12-04" for ch in channels}
    outcomes = list(results[0].values()) + list(results[1].values())
    assert sum(o.startswith("posted") for o in outcomes) == 8
    a.close()
    b.close()


def test_the_losing_worker_says_another_process_is_sending(db_url, tmp_path):
    """On SQLite and PostgreSQL. Break seen red: runner._not_ours returning the bare state ->
    'being sent (0 of 2 …)'."""
    from bot.runtime.runner import BUSY

    app = make_app(db_url, tmp_path)
    adapter = SlowAdapter(0.5)

    async def loser(b):
        return [await b.run_channel(app.store.channels.get(ChannelRef("console", "lab")).id, DAY)]

    posted, lost = _race(app, adapter, loser)
    assert posted == "posted 5 papers"
    assert lost.startswith(BUSY) and "digestbot channels" in lost, lost
    assert adapter.keys() == ["digest-1-2026-12-01#0", "digest-1-2026-12-01#1"]
    app.close()


def test_cli_digest_exits_3_while_another_process_holds_the_digest(env_isolated, capsys):
    """The CLI's losing `digest`: the plain message and exit code 3 (documented in README).

    Break seen red: cli digest_cmd ignoring BUSY (always exit 0)."""
    from bot.app import build
    from bot.cli.main import main
    from digest import BUNDLED_PAPERS
    from digest.clock.times import local_day
    from digest.delivery.steps import Deliveries

    assert main(["ingest", str(BUNDLED_PAPERS)]) == 0
    assert main(["subscribe", "console:lab", "sparse autoencoders"]) == 0
    other = build()  # another process: its own instance id, a claim it has not finished
    ch = other.store.channels.get(ChannelRef("console", "lab"))
    day = local_day(datetime.now(UTC), ch.timezone)
    assert Deliveries(other.papers, "other-host").claim(ch, day) is not None
    capsys.readouterr()
    assert main(["digest", "console:lab"]) == 3
    out = capsys.readouterr().out
    assert "another digestbot process is sending this digest right now" in out, out
    assert main(["digest", "console:lab", "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["outcome"].startswith("another digestbot")
    other.close()


def test_cli_digest_exits_3_when_every_message_is_confirmed_but_not_finished(env_isolated, capsys):
    """Three `digest` at once once printed 'being sent (1 of 1 messages confirmed)' with exit 0.

    Breaks seen red: runner._not_ours reading the state before the delivery row (a finish in
    between leaves a stale 'being sent') and the CLI exiting 0 for any outcome but BUSY."""
    from bot.app import build
    from bot.cli.main import main
    from digest import BUNDLED_PAPERS
    from digest.clock.times import local_day
    from digest.delivery.steps import Deliveries

    assert main(["ingest", str(BUNDLED_PAPERS)]) == 0
    assert main(["subscribe", "console:lab", "sparse autoencoders"]) == 0
    other = build()
    ch = other.store.channels.get(ChannelRef("console", "lab"))
    day = local_day(datetime.now(UTC), ch.timezone)
    held = Deliveries(other.papers, "other-host")
    claim = held.claim(ch, day)
    assert claim is not None and held.plan(claim, [("only part",)]) is not None
    assert held.sending(claim, 0) and held.confirm(claim, 0, "msg-1")  # all confirmed, unfinished
    capsys.readouterr()
    assert main(["digest", "console:lab"]) == 3
    out = capsys.readouterr().out
    assert "another digestbot process is sending this digest right now" in out, out
    assert held.finish(claim)
    assert main(["digest", "console:lab"]) == 0
    assert "already delivered" in capsys.readouterr().out
    other.close()


@pytest.mark.parametrize(
    ("seen", "kind"),
    [
        ("being sent (1 of 1 messages confirmed)", "BUSY"),
        ("being prepared", "BUSY"),
        ("taken over by another worker", "LOST"),
    ],
)
def test_cli_digest_never_exits_0_on_an_unsettled_outcome(
    env_isolated, capsys, monkeypatch, seen, kind
):
    """The outcome a third racing `digest` saw. Break seen red: the CLI mapping only outcomes
    starting with BUSY to exit 3 -> exit 0 and 'being sent …'."""
    from bot.cli.main import main
    from bot.runtime.outcome import Kind, Outcome
    from bot.runtime.runner import DigestRunner
    from digest import BUNDLED_PAPERS

    seen = Outcome(seen, Kind[kind])

    assert main(["ingest", str(BUNDLED_PAPERS)]) == 0
    assert main(["subscribe", "console:lab", "sparse autoencoders"]) == 0

    async def racing(self, channel_id, day):
        return seen

    monkeypatch.setattr(DigestRunner, "run_channel", racing)
    capsys.readouterr()
    assert main(["digest", "console:lab"]) == 3
    out = capsys.readouterr().out
    assert "another digestbot process is sending this digest right now" in out, out


def test_cli_digest_exits_1_when_its_own_post_fails(env_isolated, capsys, monkeypatch):
    """A `digest` whose post fails says so and exits 1 (README), and again while the retry waits.

    Breaks seen red: digest_cmd exiting 0 for any outcome but BUSY; the exit code not knowing
    'retrying at' (the second run reads the stored state, not its own failure); the BUSY
    wording applied to exit code 1 too (our own failed post read "another digestbot process
    is sending this digest right now (retrying at …)")."""
    from bot.adapters.console import ConsoleAdapter
    from bot.cli.main import main
    from bot.ports import PostError
    from digest import BUNDLED_PAPERS

    assert main(["ingest", str(BUNDLED_PAPERS)]) == 0
    assert main(["subscribe", "console:lab", "sparse autoencoders"]) == 0

    async def refuse(*args, **kwargs):
        raise PostError("ratelimited")

    with monkeypatch.context() as patch:  # undoes only this patch, not env_isolated's database
        patch.setattr(ConsoleAdapter, "post_part", refuse)
        capsys.readouterr()
        assert main(["digest", "console:lab"]) == 1
        out = capsys.readouterr().out
        assert ": retrying at " in out and "another digestbot process" not in out, out
        assert main(["digest", "console:lab"]) == 1  # the retry is not due yet: still undelivered
        out = capsys.readouterr().out
        assert ": retrying at " in out and "another digestbot process" not in out, out
    assert main(["channels"]) == 0
