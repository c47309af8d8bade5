"""Bolt middleware run before any listener: requests for other workspaces are refused, and
retried or replayed requests are dropped, remembered in the database so every process sees them.

Slack retries an event it thinks went unanswered (same ``event_id``), and a signed request can be
replayed within the 5-minute signature window; handling either twice would e.g. bring back a
withdrawn vote. The first process to insert the request's key handles it; the rest ack and stop.
The key is recorded before the listener runs, so a process that dies mid-request is not retried
by Slack's own retry of it: at most once, as a vote or subscription must be.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from slack_bolt.response import BoltResponse
from sqlalchemy import Column, DateTime, Engine, MetaData, String, Table, delete, insert
from sqlalchemy.exc import IntegrityError

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


class SeenRequests:
    """Request keys already handled by any process sharing the database."""

    def __init__(self, engine: Engine, purge_every: int = 500) -> None:
        self.engine = engine
        self.purge_every = purge_every
        self._count = 0

    def first_time(self, key: str) -> bool:
        """Record ``key``; False if some process recorded it before (the insert is the claim)."""
        now = datetime.now(UTC)
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(seen_requests).values(key=key[:255], seen_at=now))
        except IntegrityError:
            return False
        self._count += 1
        if self._count % self.purge_every == 0:
            with self.engine.begin() as conn:
                conn.execute(delete(seen_requests).where(seen_requests.c.seen_at < now - KEEP))
        return True


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
    """Global middleware: a request already handled is acked with an empty 200 and goes no further."""

    async def dedup(body, next):
        key = request_key(body)
        if key is not None and not await asyncio.to_thread(seen.first_time, key):
            log.info("dropped a repeated Slack request (%s)", key.split(":", 1)[0])
            return BoltResponse(status=200, body="")
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
