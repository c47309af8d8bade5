"""Bolt middleware run before any listener: requests for other workspaces are refused, and
retried or replayed requests are dropped, remembered in the database so every process sees them.

Slack retries an event it thinks went unanswered (same ``event_id``), and a signed request can be
replayed within the 5-minute signature window; handling either twice would e.g. bring back a
withdrawn vote. The first process to insert the request's key handles it; the rest stop.

Nothing here stands between a request and its acknowledgement: the middleware checks this
process's memory (no I/O) and starts the database claim in a worker thread; the listener acks
first and only then waits for the claim (``guard.guarded``), a short wait: a claim that finds
the database locked longer (an ingest writing) lets the request through and is stored once the
lock frees. A request handled twice needs both that and a repeat reaching another process in
that moment; a request never answered was the failure seen before (acks of 7 s and more).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from slack_bolt.response import BoltResponse
from sqlalchemy import (
    Column,
    Connection,
    DateTime,
    Engine,
    MetaData,
    String,
    Table,
    delete,
    insert,
)
from sqlalchemy.exc import IntegrityError, OperationalError

log = logging.getLogger(__name__)
metadata = MetaData()
#: Created by migration 0005_slack_dedup; the key is e.g. ``event:Ev123`` or ``command:<trigger>``.
seen_requests = Table(
    "slack_seen_requests",
    metadata,
    Column("key", String(255), primary_key=True),
    Column("seen_at", DateTime(timezone=True), nullable=False, index=True),
)
KEEP = timedelta(days=1)  # far beyond Slack's retry schedule and the 5-minute replay window
MEMORY = 10_000  # keys each process remembers itself (a retry comes within minutes)
#: The context key of a request's pending database claim (a Future[bool]; see guard.guarded).
CLAIM = "digestbot_dedup_claim"


class SeenRequests:
    """Request keys already handled by any process sharing the database."""

    def __init__(self, engine: Engine, purge_every: int = 500, wait_s: float = 0.5) -> None:
        self.engine = engine
        self.purge_every = purge_every
        self.wait_s = wait_s  # how long a claim waits for the database's write lock
        self._count = 0
        self._recent: OrderedDict[str, None] = OrderedDict()  # this process's, newest last
        self._later: set[asyncio.Task] = set()  # claims to store once the database is free

    def seen_here(self, key: str) -> bool:
        """True if this process saw ``key`` already; else remember it. No I/O: safe before the ack."""
        if key in self._recent:
            return True
        self._recent[key] = None
        if len(self._recent) > MEMORY:
            self._recent.popitem(last=False)
        return False

    def first_time(self, key: str, wait_s: float | None = None) -> bool:
        """Record ``key``; False if some process recorded it before (the insert is the claim).

        ``wait_s`` bounds the wait for another writer (SQLite's single writer, or a PostgreSQL
        transaction inserting the same key); past it an OperationalError is raised."""
        now = datetime.now(UTC)
        try:
            with self.engine.begin() as conn, _lock_wait(conn, wait_s):
                conn.execute(insert(seen_requests).values(key=key[:255], seen_at=now))
        except IntegrityError:
            return False
        self._count += 1
        if self._count % self.purge_every == 0:
            try:
                with self.engine.begin() as conn, _lock_wait(conn, wait_s):
                    conn.execute(delete(seen_requests).where(seen_requests.c.seen_at < now - KEEP))
            except OperationalError:  # busy: the next purge removes them
                log.info("purge of old Slack request keys skipped: the database is busy")
        return True

    async def claim(self, key: str) -> bool:
        """``first_time`` in a worker thread, waiting at most ``wait_s`` for the write lock; past
        that, the request is handled (an answer beats a stalled one) and its key stored later."""
        try:
            return await asyncio.to_thread(self.first_time, key, self.wait_s)
        except OperationalError as exc:
            log.warning("Slack request key not stored at once (%s); storing it later", _why(exc))
            task = asyncio.create_task(asyncio.to_thread(self._store_later, key))
            self._later.add(task)
            task.add_done_callback(self._later.discard)
            return True

    def _store_later(self, key: str) -> None:
        try:
            self.first_time(key)  # the engine's own wait (30 s on SQLite)
        except OperationalError as exc:
            log.warning("Slack request key could not be stored: %s", _why(exc))


def _why(exc: OperationalError) -> str:
    return str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__


@contextmanager
def _lock_wait(conn: Connection, wait_s: float | None) -> Iterator[None]:
    """Bound the statements' wait for locks inside the block (None: the engine's default)."""
    if wait_s is None:
        yield
    elif conn.dialect.name == "sqlite":
        # busy_timeout is per connection, and the connection goes back to the pool: restore
        # the value it had (the engine's, set when it connected)
        before = conn.exec_driver_sql("PRAGMA busy_timeout").scalar()
        conn.exec_driver_sql(f"PRAGMA busy_timeout={int(wait_s * 1000)}")
        try:
            yield
        finally:
            conn.exec_driver_sql(f"PRAGMA busy_timeout={int(before)}")
    else:  # PostgreSQL: for this transaction only
        conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{int(wait_s * 1000)}ms'")
        yield


def request_key(body: dict) -> str | None:
    """What identifies one request across Slack's retries and any replay of it."""
    if body.get("type") == "event_callback" and body.get("event_id"):
        return f"event:{body['event_id']}"
    trigger = body.get("trigger_id")
    if body.get("command") and trigger:
        return f"command:{trigger}"
    actions = body.get("actions") or [{}]
    stamp = actions[0].get("action_ts") if isinstance(actions[0], dict) else None
    if trigger or stamp:
        return f"action:{trigger}:{stamp}"
    return None


def dedup_middleware(seen: SeenRequests):
    """Global middleware: a request this process saw is acked with an empty 200 and goes no
    further; otherwise its database claim starts and the listener awaits it after its ack."""

    async def dedup(body, context, next):
        key = request_key(body)
        if key is not None:
            if seen.seen_here(key):
                log.info("dropped a repeated Slack request (%s)", key.split(":", 1)[0])
                return BoltResponse(status=200, body="")
            context[CLAIM] = asyncio.ensure_future(seen.claim(key))
        await next()

    return dedup


def single_team_middleware():
    """Global middleware (single-workspace mode): only the team `auth.test` reports is served."""

    async def own_team(context, body, next):
        result = context.authorize_result
        ours = result.team_id if result is not None else None
        if ours and context.team_id and context.team_id != ours and not context.enterprise_id:
            log.warning("refused a request from another workspace (%s)", context.team_id)
            text = "This digestbot serves one workspace only; install it in yours to use it here."
            if body.get("command"):
                return BoltResponse(status=200, body={"response_type": "ephemeral", "text": text})
            return BoltResponse(status=200, body="")
        await next()

    return own_team
