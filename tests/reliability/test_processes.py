"""Real bot processes: kill -9 during digest rounds, and two processes sharing one PostgreSQL."""

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import date, timedelta

import pytest

from digest.models import ChannelRef, SubscriptionKind
from tests.conftest import make_app
from tests.fakes.slack import FakeSlack

TOPICS = ["diffusion models", "graph neural networks", "federated learning", "sparse autoencoders"]
DAY = "2026-12-01"


def setup_channels(db_url, folder, n):
    app = make_app(db_url, folder)
    for i in range(n):
        app.channels.follows.add(
            ChannelRef("slack", f"C{i:03d}", "T1"), SubscriptionKind.TOPIC, TOPICS[i % len(TOPICS)]
        )
    ids = [c.id for c in app.store.channels.all()]
    app.papers_ready = app.papers.ranker()  # fit the index once, shared through the cache
    return app, ids


def worker(db_url, slack, seed, index_dir, days=1):
    args = [db_url, slack.url, DAY, str(days), str(seed), index_dir]
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGESTBOT_")}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.reliability.worker", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def digest_keys(slack):
    """The digest of every header that arrived (message 0 of each digest's plan)."""
    return [
        m["metadata"]["event_payload"]["key"].removesuffix("#0")
        for msgs in slack.messages.values()
        for m in msgs
        if m.get("metadata") and m["metadata"]["event_payload"]["key"].endswith("#0")
    ]


def test_kill_minus_nine_during_rounds_never_duplicates_or_loses_a_digest(tmp_path):
    db_url = f"sqlite:///{tmp_path / 'crash.db'}"
    app, ids = setup_channels(db_url, tmp_path, 50)
    index_dir = str(tmp_path / "index")
    rng = random.Random(11)
    kills = 0
    with FakeSlack() as slack:
        slack.join(*(f"C{i:03d}" for i in range(50)))
        slack.latency = 0.02  # a full round takes a few seconds, so kills land mid-round
        for n in range(20):  # two runs per simulated day; each also catches up the days before
            proc = worker(db_url, slack, n, index_dir, days=n // 2 + 1)
            time.sleep(rng.uniform(1.5, 3.5))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                kills += 1
            proc.wait(timeout=30)
        final = worker(db_url, slack, 99, index_dir, days=10)
        assert final.wait(timeout=120) == 0, final.stderr.read()[-2000:]
    keys = digest_keys(slack)
    days = [date.fromisoformat(DAY) + timedelta(days=d) for d in range(10)]
    expected = {f"digest-{i}-{d}" for i in ids for d in days}
    duplicates = len(keys) - len(set(keys))
    print(
        f"\ncrash injection: 20 runs, {kills} killed with SIGKILL, {len(set(keys))} digests "
        f"(50 channels x 10 days), duplicates {duplicates}, misses {len(expected - set(keys))}"
    )
    assert kills >= 10 and duplicates == 0 and set(keys) == expected
    assert not app.store.deliveries.unfinished()


@pytest.mark.postgres
def test_two_processes_on_one_postgres_through_a_day_of_200_channels(tmp_path):
    if not os.environ.get("DIGESTBOT_TEST_POSTGRES_URL"):
        pytest.skip("DIGESTBOT_TEST_POSTGRES_URL not set")
    from tests.conftest import _postgres_url

    db_url = _postgres_url()
    app, ids = setup_channels(db_url, tmp_path, 200)
    index_dir = str(tmp_path / "index")
    with FakeSlack() as slack:
        slack.join(*(f"C{i:03d}" for i in range(200)))
        procs = [worker(db_url, slack, seed, index_dir) for seed in (1, 2)]
        for p in procs:
            assert p.wait(timeout=180) == 0, p.stderr.read()[-2000:]
    keys = digest_keys(slack)
    per_channel = Counter(keys)
    duplicates = sum(v - 1 for v in per_channel.values())
    misses = len({f"digest-{i}-{DAY}" for i in ids} - set(keys))
    print(
        f"\ntwo processes: 200 channels, {len(keys)} digests posted, duplicates {duplicates}, misses {misses}"
    )
    assert duplicates == 0 and misses == 0
    app.close()
