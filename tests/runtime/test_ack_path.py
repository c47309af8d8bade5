"""Issue 21, item 1: nothing stands between a Slack request and its acknowledgement.

Another writer holding SQLite's write lock (an ingest, a digest being claimed) used to hold the
ack: de-duplication inserted the request's key before the listener ran and waited out the 30 s
busy timeout (an 8 s lock gave a 7.6 s ack). Now the ack goes first and the key is stored after.
"""

import asyncio
import sqlite3
from urllib.parse import urlencode

import pytest
from sqlalchemy import select

from bot.adapters.slack.bolt_middleware import SeenRequests, seen_requests
from tests.adapters.slack.test_slack_http import Harness, eventually
from tests.fakes.slack import FakeSlack

pytestmark = pytest.mark.asyncio


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")
        yield fake


def _form(h: Harness, text: str, trigger: str) -> str:
    return urlencode(
        {
            "command": "/papers",
            "text": text,
            "team_id": "T1",
            "channel_id": "C1",
            "user_id": "U1",
            "response_url": f"{h.slack.url}resp-{trigger}",
            "trigger_id": trigger,
        }
    )


def _keys(app) -> set[str]:
    with app.store.engine.connect() as conn:
        return set(conn.scalars(select(seen_requests.c.key)))


async def test_a_command_is_acked_and_answered_while_another_writer_holds_the_database(
    app, slack, tmp_path
):
    """The write lock is held in another connection for the whole request; the ack (an HTTP
    200 within the client's 10 s, where the old wait was 30 s) and the answer arrive anyway, and
    the key is stored once the lock frees: a replay to another process is then dropped.

    Breaks tried, each red: the dedup middleware inserting the key before calling the listener,
    as before (the request times out); the claim using the engine's 30 s wait (no answer while
    the lock is held); the key not stored after the lock frees (never in the table)."""
    async with Harness(app, slack) as h:
        await h.done("subscribe diffusion models")
        holder = sqlite3.connect(tmp_path / "app.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # SQLite's one write lock, as an ingest batch holds it
        try:
            body = _form(h, "list", "trig-held")
            before = len(slack.responses())
            response = await h.post(body, "application/x-www-form-urlencoded")
            assert response.status_code == 200
            assert len(await h.responses(before + 1)) == before + 1  # answered, lock still held
            assert "command:trig-held" not in _keys(app)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        await eventually(lambda: "command:trig-held" in _keys(app))
        again = await h.post(body, "application/x-www-form-urlencoded")  # same process: memory
        assert again.status_code == 200
    async with Harness(app, slack) as other:  # another process on the same database
        assert (await other.post(body, "application/x-www-form-urlencoded")).status_code == 200
        await asyncio.sleep(0.5)
    assert len(slack.responses()) == before + 1


async def test_a_repeated_request_is_acked_but_not_handled_again(app, slack):
    """A replay (same trigger) reaching another process after the first was handled: acked with
    200, not answered. Break tried, red: guarded() ignoring the claim's answer (the second
    process answers too)."""
    async with Harness(app, slack) as h:
        body = _form(h, "help", "trig-once")
        before = len(slack.responses())
        assert (await h.post(body, "application/x-www-form-urlencoded")).status_code == 200
        await h.responses(before + 1)
        await eventually(lambda: "command:trig-once" in _keys(app))
    async with Harness(app, slack) as other:
        assert (await other.post(body, "application/x-www-form-urlencoded")).status_code == 200
        await asyncio.sleep(0.5)
    assert len(slack.responses()) == before + 1


async def test_a_claim_waits_briefly_for_the_lock_then_lets_the_request_through(app, tmp_path):
    """SeenRequests.claim under a held write lock: answered True after its short wait (not the
    engine's 30 s), and the key stored once the lock frees. Breaks tried, red: the key never
    stored later. (claim() using the engine's busy timeout would run out the wait_for below.)"""
    seen = SeenRequests(app.store.engine, wait_s=0.2)
    holder = sqlite3.connect(tmp_path / "app.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert await asyncio.wait_for(seen.claim("event:EvLocked"), timeout=10) is True
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    await eventually(lambda: "event:EvLocked" in _keys(app))
    assert not await seen.claim("event:EvLocked")  # stored: any process now sees it
    with app.store.engine.connect() as conn:  # the pooled connection got its 30 s wait back
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
