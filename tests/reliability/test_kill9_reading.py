"""The reading group's posts through the one delivery ledger, with real `digestbot run`
processes killed with SIGKILL while they post.

Nine channels on PostgreSQL, three of each stage of the week, their meetings set from the
real clock: a poll opening now (meeting in 36 hours), a poll closed (meeting in 30 minutes:
the pick's announcement, its thread's opening and the reminder are owed, one after the other)
and a meeting 3 hours ago (its recap is owed, in the thread of an announcement already in the
channel). Two processes at a time (each PID 1 of its own namespace), against a fake Slack that
answers slowly and sometimes stores a message and answers 500, or stores it and drops the
answer, or answers 429; each round's processes are killed just after a post began; then one
clean process finishes. Checked from the fake's own record: every owed post arrived exactly
once (by its ledger key in the message metadata), each thread post in the announcement's
thread, and the ledger holds each posted under the message Slack stored.

Breaks that turn this red (each tried on this test, as noted):
- confirming before posting (the runner confirming a reading post with a made-up reference,
  then posting it): red (not finished within the two minutes);
- no lookup after a crash (the Slack poster's `find_part` answering None for reading posts):
  posts Slack stored before a kill or a 500 were sent again (duplicated 4, wrong reference 2);
- lapsed reading posts not taken over (the runner's `recover` without the reading kinds):
  posts killed mid-send stay `sending` for good (the final process never finished: red).
"""

from __future__ import annotations

import os
import random
import signal
import time
from datetime import UTC, datetime, timedelta

import pytest
from slack_sdk import WebClient

from digest.models import ChannelRef, DeliveryKind, DeliveryState
from digest.store.ledger import CONFIRMED, SENDING
from tests.conftest import make_app
from tests.fakes.slack import FakeSlack
from tests.reliability.test_kill9 import bot_env, pid_namespaces, start

ROUNDS = 6
KINDS = (
    DeliveryKind.RG_POLL,
    DeliveryKind.RG_PICK,
    DeliveryKind.RG_THREAD,
    DeliveryKind.RG_REMIND,
    DeliveryKind.RG_RECAP,
)


def _minute(t: datetime) -> datetime:
    return t.replace(second=0, microsecond=0) + timedelta(minutes=1)


def _posted(app, cid: int, day, kind: DeliveryKind, ref: str | None = None) -> None:
    """A post of the week already made (its ledger row confirmed under ``ref``)."""
    d = app.store.deliveries.claim(cid, day, "seed", [], kind=kind)
    app.store.ledger.plan(d.lease, [()], 120)
    app.store.ledger.mark(d.lease, 0, SENDING, 120)
    app.store.ledger.mark(d.lease, 0, CONFIRMED, 120, ref or f"C0:{time.time():.6f}")
    assert app.store.ledger.finish(d.lease)


def setup(db_url: str, folder, slack: FakeSlack) -> tuple:
    """Nine channels, three per stage; what each is owed: {channel: (meeting day, kinds)}."""
    app = make_app(db_url, folder)
    now = datetime.now(UTC)
    ids = sorted(app.store.papers.recent_ids(40))
    web = WebClient(token="xoxb-kill9", base_url=slack.url)
    slack.join(*(f"C{i:03d}" for i in range(9)))
    owed = {}
    for i in range(9):
        name = f"C{i:03d}"
        ref = ChannelRef("slack", name, "T1")
        ch = app.channels.channel(ref)
        stage = i % 3
        meeting = _minute(
            now + (timedelta(hours=36), timedelta(minutes=30), -timedelta(hours=3))[stage]
        )
        app.store.reading.set_group(ch.id, meeting.weekday(), f"{meeting:%H:%M}", "UTC", "U0")
        for n, pid in enumerate(ids[3 * i : 3 * i + 3]):
            app.store.reading.nominate(ch.id, pid, f"U{n}")
        day = meeting.date()
        if stage == 0:
            owed[name] = (day, (DeliveryKind.RG_POLL,))
            continue
        poll = app.store.reading.open_poll(
            ch.id, day, meeting, meeting - timedelta(days=1), ids[3 * i : 3 * i + 3]
        )
        for n in range(3):
            app.store.reading.vote(poll.id, f"U{n}", poll.candidates[n % 2])
        _posted(app, ch.id, day, DeliveryKind.RG_POLL)
        if stage == 1:
            owed[name] = (
                day,
                (DeliveryKind.RG_PICK, DeliveryKind.RG_THREAD, DeliveryKind.RG_REMIND),
            )
            continue
        app.commands.reading.decide(poll)
        announced = web.chat_postMessage(channel=name, text="the pick, announced earlier")
        _posted(app, ch.id, day, DeliveryKind.RG_PICK, f"{name}:{announced['ts']}")
        _posted(app, ch.id, day, DeliveryKind.RG_THREAD)
        _posted(app, ch.id, day, DeliveryKind.RG_REMIND)
        owed[name] = (day, (DeliveryKind.RG_RECAP,))
    return app, {c.ref.channel_id: c.id for c in app.store.channels.all()}, owed


def chaos(rng: random.Random):
    def fault(method: str, args: dict) -> str | None:  # noqa: ARG001
        if method != "chat.postMessage":
            return None
        roll = rng.random()
        return (
            "500-stored"
            if roll < 0.15
            else "drop"
            if roll < 0.3
            else "429"
            if roll < 0.35
            else "500"
            if roll < 0.4
            else None
        )

    return fault


def posts(slack: FakeSlack) -> int:
    return sum(m == "chat.postMessage" for m, _ in slack.calls)


def state(app, ids, owed) -> dict[tuple[str, DeliveryKind], object]:
    return {
        (ch, kind): app.store.deliveries.for_day(ids[ch], day, kind)
        for ch, (day, kinds) in owed.items()
        for kind in kinds
    }


def wait_all_posted(app, ids, owed, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = state(app, ids, owed).values()
        if all(d is not None and d.status == DeliveryState.POSTED for d in got):
            return True
        time.sleep(0.5)
    return False


@pytest.mark.postgres
def test_kill_minus_nine_while_reading_posts_are_sent_each_arrives_exactly_once(tmp_path):
    if not os.environ.get("DIGESTBOT_TEST_POSTGRES_URL"):
        pytest.skip("DIGESTBOT_TEST_POSTGRES_URL not set")
    if not pid_namespaces():
        pytest.skip("no PID namespaces here")
    from tests.conftest import _postgres_url

    db_url = _postgres_url()
    rng = random.Random(17)
    kills, cut = 0, set()
    with FakeSlack() as slack:
        app, ids, owed = setup(db_url, tmp_path, slack)
        slack.latency = 0.1
        slack.chaos = chaos(rng)
        env = bot_env(db_url, slack, str(tmp_path / "index"))
        env |= {"DIGESTBOT_READING_SWEEP_SECONDS": "0.5", "DIGESTBOT_CATCHUP_GRACE_HOURS": "12"}
        for _ in range(ROUNDS):
            procs = [start(env, True) for _ in range(2)]
            begun, end = posts(slack), time.monotonic() + 60
            while posts(slack) <= begun and time.monotonic() < end:
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 0.6))  # inside a post, or just after it
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGKILL)
                    kills += 1
                p.wait(timeout=30)
            cut |= {
                k
                for k, d in state(app, ids, owed).items()
                if d and d.status == DeliveryState.SENDING
            }
        slack.chaos = None
        final = start(env, True)
        finished = wait_all_posted(app, ids, owed, timeout=120)
        final.send_signal(signal.SIGKILL)
        err = final.communicate(timeout=30)[1]
        got = state(app, ids, owed)
        missing = duplicated = wrong = 0
        for (ch, kind), d in got.items():
            key = f"{kind.value}-{ids[ch]}-{owed[ch][0].isoformat()}#0"
            landed = [
                m
                for m in slack.arrived(ch)
                if ((m.get("metadata") or {}).get("event_payload") or {}).get("key") == key
            ]
            missing += not landed
            duplicated += max(0, len(landed) - 1)
            refs = [m.message_ref for m in app.store.ledger.messages(d.id)] if d else []
            wrong += bool(landed) and refs != [f"{ch}:{landed[0]['ts']}"]
            if kind in (DeliveryKind.RG_THREAD, DeliveryKind.RG_REMIND, DeliveryKind.RG_RECAP):
                pick = app.store.deliveries.for_day(ids[ch], owed[ch][0], DeliveryKind.RG_PICK)
                head = app.store.ledger.messages(pick.id)[0].message_ref.split(":")[1]
                wrong += any(m.get("thread_ts") != head for m in landed)
        injected = dict(slack.injected)
    print(
        f"\nreading kill -9: {ROUNDS} rounds x 2 processes, {kills} SIGKILLs, {len(cut)} posts"
        f" killed while sending, faults {injected}; posts {len(got)}, missing {missing},"
        f" duplicated {duplicated}, wrong {wrong}"
    )
    assert finished, err[-2000:]
    assert kills >= ROUNDS
    assert missing == 0 and duplicated == 0 and wrong == 0
    app.close()
