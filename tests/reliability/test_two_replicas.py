"""Issue 21, item 5: two real `digestbot run` replicas on one PostgreSQL, Slack in HTTP mode behind
a (simulated) load balancer, against the strict Slack fake."""

import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import httpx
import pytest
from slack_sdk.signature import SignatureVerifier

from digest.models import ChannelRef, SubscriptionKind
from tests.conftest import make_app
from tests.fakes.slack import FakeSlack

SECRET = "replica-secret"
CHANNELS = [f"C{i}" for i in range(6)]
QUERIES = ["graph neural networks", "diffusion models", "federated learning", "sparse autoencoders"]
pytestmark = pytest.mark.postgres


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def until(condition, timeout: float) -> bool:
    """Poll ``condition`` for at most ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def replica(db_url: str, slack: FakeSlack, port: int, folder, name: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGESTBOT_")}
    env |= {
        "DIGESTBOT_DATABASE_URL": db_url,
        "DIGESTBOT_INDEX_DIR": str(folder / "index"),
        "DIGESTBOT_SEMANTIC": "off",
        "DIGESTBOT_HEALTH_PORT": "0",
        "DIGESTBOT_DELIVERY_SWEEP_SECONDS": "1",  # both sweep often: more chances to collide
        "DIGESTBOT_SLACK_BOT_TOKEN": "xoxb-replicas",
        "DIGESTBOT_SLACK_SIGNING_SECRET": SECRET,
        "DIGESTBOT_SLACK_API_URL": slack.url,
        "DIGESTBOT_SLACK_HOST": "127.0.0.1",
        "DIGESTBOT_SLACK_PORT": str(port),
    }
    log = open(folder / f"{name}.log", "w")  # noqa: SIM115 - the process writes it; closed by the OS
    return subprocess.Popen(
        [sys.executable, "-m", "bot", "run"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=folder,
    )


def command(base: str, text: str, trigger: str, slack: FakeSlack, headers=None) -> int:
    """One signed `/papers` slash command, answered to its own response URL (resp-<trigger>)."""
    form = {
        "command": "/papers",
        "text": text,
        "team_id": "T1",
        "channel_id": CHANNELS[0],
        "user_id": "U1",
        "response_url": f"{slack.url}resp-{trigger}",
        "trigger_id": trigger,
    }
    body, ts = urlencode(form), str(int(time.time()))
    signed = {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": SignatureVerifier(SECRET).generate_signature(timestamp=ts, body=body),
        "Content-Type": "application/x-www-form-urlencoded",
    }
    url = f"{base}/slack/events"
    return httpx.post(
        url, content=body, headers={**signed, **(headers or {})}, timeout=10
    ).status_code


def up(base: str) -> bool:
    try:
        httpx.get(f"{base}/slack/events", timeout=2)
        return True
    except httpx.TransportError:
        return False


def headers_in(slack: FakeSlack, channel: str) -> list[str]:
    """The digest keys of the headers that landed in ``channel`` (message 0 of each digest)."""
    keys = [
        (m.get("metadata") or {}).get("event_payload", {}).get("key", "")
        for m in slack.arrived(channel)
    ]
    return [k for k in keys if k.endswith("#0")]


def test_two_replicas_answer_each_command_once_and_post_each_digest_once(tmp_path):
    """Two `digestbot run` processes on one PostgreSQL, each on its own port; eight distinct
    commands alternate between them, and one command is sent to both (the same trigger_id, the
    second with Slack's retry headers, as a load balancer would pass on a retry): each distinct
    command gets exactly one answer at its response URL, the duplicate one in total. Six
    channels due now get one digest header each across the two replicas.

    Breaks that turn this red: SeenRequests.first_time always True (the duplicate answered
    twice: per-process memory alone does not share de-duplication); the delivery claim not
    exclusive (DeliveryRepo.claim handing a second worker the claim another holds, instead of
    None: one channel or more gets its header twice)."""
    if not os.environ.get("DIGESTBOT_TEST_POSTGRES_URL"):
        pytest.skip("DIGESTBOT_TEST_POSTGRES_URL not set")
    from tests.conftest import _postgres_url

    db_url = _postgres_url()
    app = make_app(db_url, tmp_path)
    now = datetime.now(UTC)
    # due a little before now, today (a time before the channel was set up is never caught up)
    at = max(now - timedelta(minutes=2), now.replace(hour=0, minute=0)).strftime("%H:%M")
    for n, channel in enumerate(CHANNELS):
        ref = ChannelRef("slack", channel, "T1")
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, QUERIES[n % len(QUERIES)])
        app.channels.settings.set_schedule(ref, at, "UTC", "daily")
    app.papers.ranker()  # the index fitted once, in the shared folder
    app.close()
    procs: list[subprocess.Popen] = []
    with FakeSlack() as slack:
        slack.join(*CHANNELS)
        slack.latency = 0.05  # posts overlap the other replica's tick, as on a real network
        try:
            bases = []
            for name in ("a", "b"):
                port = free_port()
                procs.append(replica(db_url, slack, port, tmp_path, name))
                bases.append(f"http://127.0.0.1:{port}")
            assert until(lambda: all(up(b) for b in bases), 45), "a replica did not start"
            triggers = []
            for n in range(8):  # round robin, as a load balancer spreads them
                trigger = f"t{n}"
                text = "list" if n % 4 == 3 else f"search {QUERIES[n % 4]}"
                assert command(bases[n % 2], text, trigger, slack) == 200
                triggers.append(trigger)
            assert command(bases[0], "search diffusion models", "dup", slack) == 200
            retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
            assert command(bases[1], "search diffusion models", "dup", slack, retry) == 200

            def answers() -> Counter:
                return Counter(
                    m.removeprefix("resp-") for m, _ in slack.calls if m.startswith("resp-")
                )

            def digests() -> dict[str, list[str]]:
                return {c: headers_in(slack, c) for c in CHANNELS}

            assert until(lambda: set(answers()) >= {*triggers, "dup"}, 45), answers()
            assert until(lambda: all(digests().values()), 45), digests()
            time.sleep(3)  # a few more sweeps of both: room for a late duplicate to show
            got, posted = answers(), digests()
        finally:
            for p in procs:
                p.send_signal(signal.SIGTERM)
            for p in procs:
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(timeout=10)
    assert got == Counter({t: 1 for t in [*triggers, "dup"]}), got
    assert all(len(keys) == 1 for keys in posted.values()), posted
    assert not slack.rejected, slack.rejected[:3]
    assert all(p.returncode == 0 for p in procs), [
        (tmp_path / f"{n}.log").read_text()[-1500:] for n in ("a", "b")
    ]
