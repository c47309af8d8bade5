"""Weekly pictures through the one delivery ledger, with real `digestbot run` processes killed
with SIGKILL while pictures are being drawn and uploaded.

Each process runs as PID 1 of its own PID namespace (its drawing process dies with it), two at
a time on PostgreSQL, against a fake Slack whose upload flow is slow (each call 0.15 s) and whose
last step sometimes shares the file and then answers 500, and whose first step sometimes answers
429 or 500 (nothing shared). Each round's processes are killed just after an upload began; then
one clean process finishes. Checked from the fake's own record: every channel has exactly one
picture shared, and the ledger holds it posted under the file Slack shared.

Breaks that turn this red (each tried on this test, as noted):
- confirming before the upload (the runner confirming a picture, then uploading it): a process
  killed between the two leaves pictures posted that never arrived (missing 5 of 6);
- no lookup after a crash (the Slack poster's `find_part` answering None for an image): a
  picture killed after Slack shared it was shared again (duplicated 1);
- lapsed pictures not taken over (the runner's `recover` without the weekly kind): pictures
  killed mid-upload stay `sending` for good (the final process never finished; red).
Tried and NOT caught here: the lease not checked (owner and fence dropped from
`DeliveryRepo.held_by` and the group commit's fence): the run stayed green (no two processes
held one picture at once in it); tests/delivery's
`test_a_worker_that_lost_its_lease_can_neither_post_nor_record` catches that break.
"""

from __future__ import annotations

import os
import random
import signal
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session

from digest.models import ChannelRef, DeliveryKind, DeliveryState, SubscriptionKind
from digest.store.deliveries import ItemClaim
from digest.store.schema import DeliveryRow
from tests.conftest import make_app
from tests.fakes.slack import FakeSlack
from tests.reliability.test_kill9 import bot_env, pid_namespaces, start

CHANNELS = 6
ROUNDS = 4
TOPICS = ("diffusion models", "graph neural networks")


def setup(db_url: str, folder) -> tuple:
    """Channels with two interests (the picture is on) and two earlier weeks of digests to
    draw; their digests are not due this week, so only pictures are sent."""
    app = make_app(db_url, folder)
    today = datetime.now(UTC).date()
    papers = sorted(app.store.papers.recent_ids(200))
    off = (today + timedelta(days=3)).strftime("%a").lower()  # no digest due in this test
    for i in range(CHANNELS):
        ref = ChannelRef("slack", f"C{i:03d}", "T1")
        for topic in TOPICS:
            app.channels.follows.add(ref, SubscriptionKind.TOPIC, topic)
        app.channels.settings.set_schedule(ref, "00:00", "UTC", off)
        cid = app.store.channels.get(ref).id
        for n, back in enumerate((7, 14)):
            mine = papers[6 * i + 3 * n : 6 * i + 3 * n + 3]
            items = [
                ItemClaim(p, r, 0.5, f"matches '{TOPICS[r % 2]}': w") for r, p in enumerate(mine)
            ]
            app.store.deliveries.claim(cid, today - timedelta(days=back), "seed", items)
    with Session(app.store.engine) as s:  # delivered weeks ago: nothing left to send
        s.execute(update(DeliveryRow).values(status=DeliveryState.POSTED.value))
        s.commit()
    monday = today - timedelta(days=today.weekday())
    return app, {c.ref.channel_id: c.id for c in app.store.channels.all()}, monday


def chaos(rng: random.Random):
    def fault(method: str, args: dict) -> str | None:  # noqa: ARG001
        roll = rng.random()
        if method == "files.completeUploadExternal":
            return "500-stored" if roll < 0.3 else None
        if method == "files.getUploadURLExternal":
            return "429" if roll < 0.15 else "500" if roll < 0.3 else None
        return None

    return fault


def uploads(slack: FakeSlack) -> int:
    return sum(m == "files.getUploadURLExternal" for m, _ in slack.calls)


def pictures(app, ids: dict[str, int], monday) -> dict[str, object]:
    return {
        ch: app.store.deliveries.for_day(cid, monday, DeliveryKind.WEEKLY)
        for ch, cid in ids.items()
    }


def wait_all_posted(app, ids, monday, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = pictures(app, ids, monday).values()
        if all(p is not None and p.status == DeliveryState.POSTED for p in got):
            return True
        time.sleep(0.5)
    return False


@pytest.mark.postgres
def test_kill_minus_nine_while_pictures_are_sent_each_arrives_exactly_once(tmp_path):
    if not os.environ.get("DIGESTBOT_TEST_POSTGRES_URL"):
        pytest.skip("DIGESTBOT_TEST_POSTGRES_URL not set")
    if not pid_namespaces():  # without one, a killed bot's drawing process would outlive it
        pytest.skip("no PID namespaces here")
    from tests.conftest import _postgres_url

    db_url = _postgres_url()
    app, ids, monday = setup(db_url, tmp_path)
    rng = random.Random(11)
    kills, cut = 0, set()
    with FakeSlack() as slack:
        slack.join(*ids)
        slack.latency = 0.15
        slack.chaos = chaos(rng)
        env = bot_env(db_url, slack, str(tmp_path / "index"))
        env |= {"DIGESTBOT_WEEKLY_SWEEP_SECONDS": "0.5", "DIGESTBOT_CATCHUP_GRACE_HOURS": "12"}
        for _ in range(ROUNDS):
            procs = [start(env, True) for _ in range(2)]
            begun, end = uploads(slack), time.monotonic() + 60
            while uploads(slack) <= begun and time.monotonic() < end:
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 0.4))  # inside the upload, or just after it
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGKILL)
                    kills += 1
                p.wait(timeout=30)
            cut |= {
                ch
                for ch, p in pictures(app, ids, monday).items()
                if p is not None and p.status == DeliveryState.SENDING
            }
        slack.chaos = None
        final = start(env, True)
        finished = wait_all_posted(app, ids, monday, timeout=120)
        final.send_signal(signal.SIGKILL)
        err = final.communicate(timeout=30)[1]
        shared = {
            ch: [f"{ch}:{f}" for f, u in slack.uploads.items() if u.get("channel") == ch]
            for ch in ids
        }
        lookups = sum(m == "files.list" for m, _ in slack.calls)
        got = pictures(app, ids, monday)
        missing = sum(not shared[ch] for ch in ids)
        duplicated = sum(max(0, len(shared[ch]) - 1) for ch in ids)
        planned = {ch: app.store.ledger.messages(got[ch].id) if got[ch] else [] for ch in ids}
        refs = {ch: [m.message_ref for m in planned[ch]] for ch in ids}
        wrong = sum(refs[ch][:1] != shared[ch][:1] for ch in ids)
    print(
        f"\nweekly kill -9: {ROUNDS} rounds x 2 processes, {kills} SIGKILLs, {len(cut)} pictures"
        f" killed while sending, {lookups} lookups, faults {dict(slack.injected)};"
        f" pictures {CHANNELS}, missing {missing}, duplicated {duplicated}, wrong ref {wrong}"
    )
    assert finished, err[-2000:]
    assert kills >= ROUNDS and cut, "the kills must land while pictures are being sent"
    assert missing == 0 and duplicated == 0 and wrong == 0
    app.close()
