"""Real `digestbot run` processes (scheduler, catch-up, sweep and all), killed with SIGKILL.

Each process runs in its own PID namespace (``unshare --pid --fork``), so every restart is PID 1
on the same host name, as in a container. Several run at once on PostgreSQL, against a fake
Slack that drops connections and answers 429/500 at random. Checked from the fake's own record:
per channel and day, every planned paper arrived exactly once, and nothing else did.

Deliberate break tried: recovery confirming a `sending` message without asking the platform
(find_part skipped): 5 planned papers never arrived, this test went red. The instance-id break
(host:pid) is caught by test_instance_ids_differ_across_restarts_in_a_pid_namespace below.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from digest.models import ChannelRef, SubscriptionKind
from digest.store.deliveries import POSTED
from tests.conftest import make_app
from tests.fakes.slack import FakeSlack

TOPICS = ["diffusion models", "graph neural networks", "federated learning", "sparse autoencoders"]
CHANNELS = 8
ROUNDS = 4


def pid_namespaces() -> bool:
    """True when this machine lets us start a process as PID 1 of a new namespace."""
    if shutil.which("unshare") is None:
        return False
    return (
        subprocess.run(["unshare", "--pid", "--fork", "true"], capture_output=True).returncode == 0
    )


def bot_env(db_url: str, slack: FakeSlack, index_dir: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGESTBOT_")}
    return env | {
        "DIGESTBOT_DATABASE_URL": db_url,
        "DIGESTBOT_INDEX_DIR": index_dir,
        "DIGESTBOT_SLACK_BOT_TOKEN": "xoxb-kill9",
        "DIGESTBOT_SLACK_SIGNING_SECRET": "kill9",
        "DIGESTBOT_SLACK_API_URL": slack.url,
        "DIGESTBOT_SLACK_HOST": "127.0.0.1",
        "DIGESTBOT_SLACK_PORT": "0",
        "DIGESTBOT_HEALTH_PORT": "0",
        "DIGESTBOT_CATCHUP_GRACE_HOURS": "30",  # today's 00:00 digest is always due
        "DIGESTBOT_DELIVERY_LEASE_SECONDS": "1.5",
        "DIGESTBOT_DELIVERY_SWEEP_SECONDS": "0.5",
        "DIGESTBOT_DELIVERY_BACKOFF_SECONDS": json.dumps([0.3, 0.6, 1.0]),
    }


def start(env: dict[str, str], namespaced: bool) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "bot", "run"]
    if namespaced:  # --kill-child: SIGKILL to unshare takes the bot (PID 1 inside) with it
        cmd = ["unshare", "--pid", "--fork", "--kill-child", *cmd]
    return subprocess.Popen(
        cmd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def setup(db_url: str, folder) -> tuple:
    app = make_app(db_url, folder)
    for i in range(CHANNELS):
        ref = ChannelRef("slack", f"C{i:03d}", "T1")
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, TOPICS[i % len(TOPICS)])
        app.channels.settings.set_schedule(ref, "00:00", "UTC", "daily")
        if i % 2:
            app.channels.settings.set_option(ref, "threads", True)
        else:
            app.channels.settings.set_size(ref, "20")  # over 50 blocks: split into several messages
    app.papers.ranker()  # fit the index once; the processes share it through the cache
    return app, {c.ref.channel_id: c.id for c in app.store.channels.all()}


def arrived_papers(slack: FakeSlack, channel: str) -> list[str]:
    """Papers shown by the messages that reached the fake, from their Block Kit section ids."""
    return [
        b["block_id"].removeprefix("paper:")
        for m in slack.arrived(channel)
        for b in m.get("blocks") or []
        if str(b.get("block_id", "")).startswith("paper:")
    ]


def chaos(rng: random.Random):
    def fault(method: str, args: dict) -> str | None:
        if method != "chat.postMessage":
            return None
        roll = rng.random()
        return "drop" if roll < 0.04 else "500" if roll < 0.08 else "429" if roll < 0.12 else None

    return fault


def wait_posts(slack: FakeSlack, n: int, timeout: float) -> None:
    end = time.monotonic() + timeout
    while len(slack.posts()) < n and time.monotonic() < end:
        time.sleep(0.05)


def wait_all_posted(app, ids, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        done = [app.store.deliveries.last(i) for i in ids.values()]
        if all(d is not None and d.status == POSTED for d in done):
            return True
        time.sleep(0.5)
    return False


@pytest.mark.postgres
def test_kill_minus_nine_on_postgres_every_planned_paper_arrives_exactly_once(tmp_path):
    if not os.environ.get("DIGESTBOT_TEST_POSTGRES_URL"):
        pytest.skip("DIGESTBOT_TEST_POSTGRES_URL not set")
    from tests.conftest import _postgres_url

    db_url = _postgres_url()
    app, ids = setup(db_url, tmp_path)
    namespaced = pid_namespaces()
    rng = random.Random(7)
    kills = 0
    with FakeSlack() as slack:
        slack.join(*(f"C{i:03d}" for i in range(CHANNELS)))
        slack.latency = 0.03
        slack.chaos = chaos(rng)
        env = bot_env(db_url, slack, str(tmp_path / "index"))
        for _ in range(ROUNDS):
            procs = [start(env, namespaced) for _ in range(2)]
            wait_posts(slack, len(slack.posts()) + rng.randint(1, 8), timeout=30)
            time.sleep(rng.uniform(0.0, 1.5))  # kills land mid-digest, whatever start-up took
            for p in procs:  # PID 1 ignores an unhandled SIGTERM: SIGKILL it is, every time
                if p.poll() is None:
                    p.send_signal(signal.SIGKILL)
                    kills += 1
                p.wait(timeout=30)
        slack.chaos = None
        before_final = len(slack.posts())
        final = start(env, namespaced)
        finished = wait_all_posted(app, ids, timeout=120)
        final.send_signal(signal.SIGKILL)
        err = final.communicate(timeout=30)[1]
        report = check(app, slack, ids)
    print(
        f"\nkill -9: {ROUNDS} rounds x 2 processes, {kills} SIGKILLs, PID namespaces {namespaced}, "
        f"posts before the final start {before_final}, faults {dict(slack.injected)}; {report}"
    )
    assert finished, err[-2000:]
    assert before_final >= CHANNELS, "the kills must land while digests are being posted"
    assert kills >= ROUNDS and report["duplicated"] == 0 and report["lost"] == 0
    assert report["extra"] == 0 and report["digests"] == CHANNELS
    app.close()


def check(app, slack: FakeSlack, ids: dict[str, int]) -> dict[str, int]:
    """Planned papers (the ledger) against what reached the fake (its record)."""
    planned = duplicated = lost = extra = digests = 0
    for channel, cid in ids.items():
        d = app.store.deliveries.last(cid)
        want = {i.paper_id for i in d.items} if d else set()
        got = Counter(arrived_papers(slack, channel))
        headers = [
            m
            for m in slack.arrived(channel)
            if m["metadata"]["event_payload"]["key"].endswith("#0")
        ]
        digests += len(headers) == 1 and d is not None and d.status == POSTED
        planned += len(want)
        duplicated += sum(n - 1 for n in got.values()) + max(0, len(headers) - 1)
        lost += len(want - set(got))
        extra += len(set(got) - want)
    return {
        "digests": digests,
        "planned": planned,
        "duplicated": duplicated,
        "lost": lost,
        "extra": extra,
    }


def test_instance_ids_differ_across_restarts_in_a_pid_namespace(tmp_path):
    """Two starts as PID 1 on one host get different ids (host:pid would be equal)."""
    if not pid_namespaces():
        pytest.skip("no PID namespaces here")
    code = (
        "import os; from bot.app import build; a = build('sqlite:///"
        + str(tmp_path / "x.db")
        + "'); print(os.getpid(), a.worker)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGESTBOT_")}
    runs = [
        subprocess.run(
            ["unshare", "--pid", "--fork", sys.executable, "-c", code],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0][0] == runs[1][0] == "1"
    assert runs[0][1] != runs[1][1]
