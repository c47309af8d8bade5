"""A scheduler tick's reads and writes in bulk: what every due channel's digest needs, read in a
few statements, and their claims taken in a few more, whatever the number of channels.

The claim stays exactly-once in the database: ``INSERT … ON CONFLICT DO NOTHING RETURNING`` on
the unique (channel, day) and (channel, paper), lease times from the database clock, so a row
another process took first simply does not come back, and a digest whose papers another day's
claim reserved meanwhile is withdrawn in the same transaction (as the one-row claim would fail).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import cache
from typing import TypeVar

from sqlalchemy import (
    ARRAY,
    Column,
    ColumnElement,
    Connection,
    Date,
    Engine,
    Integer,
    Row,
    Table,
    Text,
    any_,
    bindparam,
    cast,
    column,
    delete,
    func,
    select,
    update,
)
from sqlalchemy.types import TypeEngine

from digest.models import DeliveryKind, Subscription
from digest.store.channels import _sub
from digest.store.deliveries import (
    CLAIMED,
    DIGESTS,
    EMPTY,
    SENDING,
    ItemClaim,
    db_now,
    mentions_column,
)
from digest.store.schema import (
    ChannelRow,
    DeliveryItemRow,
    DeliveryMessageRow,
    DeliveryRow,
    FeedbackRow,
    SubscriptionRow,
)

T = TypeVar("T")
#: Channels per statement: the IN lists and multi-row VALUES stay well inside both engines'
#: parameter limits (SQLite 32,766; PostgreSQL 65,535).
CHUNK = 500


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    """``items`` in slices of ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass
class ChannelReads:
    """What composing a channel's digest reads from the store, for many channels at once."""

    subscriptions: dict[int, list[Subscription]] = field(default_factory=dict)
    totals: dict[int, dict[str, int]] = field(default_factory=dict)
    delivered: dict[int, set[str]] = field(default_factory=dict)
    last_upto: dict[int, int] = field(default_factory=dict)
    existing: set[tuple[int, date]] = field(default_factory=set)


@dataclass(frozen=True)
class NewClaim:
    """One digest to reserve: its papers, and its plan (messages and rendering) stored with it."""

    channel_id: int
    day: date
    items: tuple[ItemClaim, ...]
    near_misses: int
    quiet: bool
    upto_seq: int
    parts: tuple[tuple[str, ...], ...]
    rendered: str | None


@dataclass(frozen=True)
class Taken:
    """A claim the database gave us: the delivery row's id, fence and claim time."""

    delivery_id: int
    status: str
    claimed_at: datetime
    fence: int = 1


def _finite(score: float) -> float:
    """A score JSON can carry: a NaN or infinity (never expected from the ranker) would make
    PostgreSQL refuse the whole tick's claim, so it is stored as 0 instead."""
    return score if math.isfinite(score) else 0.0


def _insert_many(
    conn: Connection,
    table: Table,
    rows: list[dict],
    unique: list[str] | None = None,
    returning: Sequence[Column] = (),
) -> list[Row]:
    """Insert ``rows`` but those whose ``unique`` key exists (``ON CONFLICT DO NOTHING``, when
    given); the ``returning`` columns of the rows inserted, in no particular order.

    PostgreSQL gets every row in one JSON parameter (``INSERT … SELECT … FROM
    json_to_recordset(…)``): the same rows as a multi-row VALUES, but the statement's text stays
    short, so the driver converts it once (cached) instead of parsing ~10 placeholders a row
    each time (a third of a tick's CPU), and the rows are serialised by the json module's C
    code (a text array parameter escapes each value in Python)."""
    # Imported here: the PostgreSQL dialect package loads all its drivers' modules, which a
    # SQLite deployment (and every command that only reads) never needs.
    if conn.dialect.name != "postgresql":
        from sqlalchemy.dialects.sqlite import insert

        stmt = insert(table)
        if unique:
            stmt = stmt.on_conflict_do_nothing(index_elements=unique)
        if not returning:  # a plain executemany
            conn.execute(stmt, rows)
            return []
        return list(conn.execute(stmt.returning(*returning), rows))
    from sqlalchemy.dialects.postgresql import JSON, insert

    names = list(rows[0])
    typed = [column(n, table.c[n].type) for n in names]
    text = json.dumps(rows, default=_iso, separators=(",", ":"))
    source = (
        func.json_to_recordset(cast(bindparam("rows", text, type_=Text), JSON))
        .table_valued(*typed)
        .render_derived(name="given", with_types=True)
    )  # the rows as one JSON text, typed by the table's own columns
    stmt = insert(table).from_select(names, select(*(source.c[n] for n in names)))
    if unique:
        stmt = stmt.on_conflict_do_nothing(index_elements=unique)
    if not returning:
        conn.execute(stmt)
        return []
    return list(conn.execute(stmt.returning(*returning)))


def _among(conn: Connection):  # noqa: ANN202 - a function making SQL conditions
    """``column IN (values)`` for this connection's engine. PostgreSQL gets one array parameter
    (``= ANY(…)``): the statement's text is the same for any number of values, so it is compiled
    and parsed once, not rendered with 500 placeholders for every chunk (a long statement the
    driver does not cache, and parses again each time)."""
    if conn.dialect.name != "postgresql":
        return lambda col, values, _type: col.in_(list(values))

    def among(col: ColumnElement, values: Iterable, item_type: type[TypeEngine]) -> ColumnElement:
        return col == any_(bindparam(None, list(values), type_=ARRAY(item_type)))

    return among


def _iso(value: object) -> str:
    """Dates and times in the JSON rows, as PostgreSQL reads them back (ISO 8601)."""
    if isinstance(value, date):  # datetime is a date too
        return value.isoformat()
    raise TypeError(f"cannot store {type(value).__name__} in a JSON row")


def _clock(value: datetime | str) -> datetime:
    """The database's clock as an aware UTC datetime (SQLite answers with text)."""
    at = datetime.fromisoformat(value) if isinstance(value, str) else value
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


class BatchRepo:
    """Bulk reads and claims for a scheduler tick; statements per tick do not grow per channel
    (up to ``CHUNK`` channels a statement)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def reads(self, channel_ids: Sequence[int], days: Iterable[date]) -> ChannelReads:
        """Subscriptions, net votes, papers sent, last considered sequence and the days already
        claimed (among ``days``) of ``channel_ids``, five statements a chunk."""
        out = ChannelReads()
        days = sorted(set(days))
        with self.engine.connect() as conn:
            among = _among(conn)
            for ids in chunks(channel_ids):
                subs = select(SubscriptionRow).where(
                    among(SubscriptionRow.channel_id, ids, Integer)
                )
                for row in conn.execute(subs.order_by(SubscriptionRow.id)):
                    out.subscriptions.setdefault(row.channel_id, []).append(_sub(row))
                votes = (
                    select(
                        FeedbackRow.channel_id, FeedbackRow.paper_id, func.sum(FeedbackRow.value)
                    )
                    .where(among(FeedbackRow.channel_id, ids, Integer))
                    .group_by(FeedbackRow.channel_id, FeedbackRow.paper_id)
                )
                for cid, pid, total in conn.execute(votes):
                    out.totals.setdefault(cid, {})[pid] = int(total)
                sent = select(DeliveryItemRow.channel_id, DeliveryItemRow.paper_id).where(
                    among(DeliveryItemRow.channel_id, ids, Integer)
                )
                for cid, pid in conn.execute(sent):
                    out.delivered.setdefault(cid, set()).add(pid)
                upto = (
                    select(DeliveryRow.channel_id, func.max(DeliveryRow.upto_seq))
                    .where(among(DeliveryRow.channel_id, ids, Integer), DIGESTS)
                    .group_by(DeliveryRow.channel_id)
                )
                out.last_upto.update({cid: seq or 0 for cid, seq in conn.execute(upto)})
                claimed = select(DeliveryRow.channel_id, DeliveryRow.digest_date).where(
                    among(DeliveryRow.channel_id, ids, Integer),
                    among(DeliveryRow.digest_date, days, Date),
                    DIGESTS,
                )
                out.existing.update((cid, d) for cid, d in conn.execute(claimed))
        return out

    def claim(
        self, claims: Sequence[NewClaim], worker: str, lease_s: float, grace_s: float
    ) -> dict[int, Taken]:
        """Reserve each (channel, day) with its papers and plan; the ones we got, by channel id.

        One transaction for all of ``claims``: rows another process claimed first do not come
        back (ON CONFLICT DO NOTHING), and a digest one of whose papers is already reserved for
        its channel (another day's claim won the race) is taken back before the commit, so it
        is not claimed, exactly as a one-row claim failing on the unique (channel, paper).
        """
        if not claims:
            return {}
        with self.engine.begin() as conn:
            # The database's clock, read once: every claim of the batch starts now by it.
            now = _clock(conn.execute(select(db_now(self.engine))).scalar_one())
            lease, give_up = now + timedelta(seconds=lease_s), now + timedelta(seconds=grace_s)
            rows = [
                dict(
                    channel_id=c.channel_id,
                    digest_date=c.day,
                    kind=DeliveryKind.DIGEST.value,
                    status=_status(c),
                    claimed_by=worker,
                    claimed_at=now,
                    near_misses=c.near_misses,
                    fence=1,
                    lease_until=lease,
                    give_up_at=give_up,
                    upto_seq=c.upto_seq,
                    rendered=None if _status(c) == EMPTY else c.rendered,
                    attempts=0,
                )
                for c in claims
            ]
            deliveries, items_t = DeliveryRow.__table__, DeliveryItemRow.__table__
            returning = (deliveries.c.id, deliveries.c.channel_id, deliveries.c.status)
            found = _insert_many(
                conn, deliveries, rows, ["channel_id", "kind", "digest_date"], returning
            )
            got = {cid: (did, st) for did, cid, st in found}
            mine = [c for c in claims if c.channel_id in got]
            wanted = {got[c.channel_id][0]: len(c.items) for c in mine}
            items = [
                dict(
                    delivery_id=got[c.channel_id][0],
                    channel_id=c.channel_id,
                    paper_id=i.paper_id,
                    rank=i.rank,
                    score=_finite(i.score),
                    why=i.why,
                    position=_position(c.parts, i.paper_id),
                    message_ref=None,
                    mentions=mentions_column(i.mentions),
                )
                for c in mine
                for i in c.items
            ]
            stored: dict[int, int] = defaultdict(int)
            if items:
                key = ["channel_id", "paper_id"]
                for (did,) in _insert_many(conn, items_t, items, key, (items_t.c.delivery_id,)):
                    stored[did] += 1
            lost = [did for did, n in wanted.items() if stored[did] != n]
            if lost:  # a paper of these is another day's: not claimed (the one-row rule)
                conn.execute(delete(items_t).where(items_t.c.delivery_id.in_(lost)))
                conn.execute(delete(deliveries).where(deliveries.c.id.in_(lost)))
            messages = [
                dict(
                    delivery_id=got[c.channel_id][0],
                    position=n,
                    paper_ids=list(ids),
                    status=SENDING if n == 0 else "planned",
                    message_ref=None,
                )
                for c in mine
                if got[c.channel_id][0] not in lost and _status(c) != EMPTY
                for n, ids in enumerate(c.parts)
            ]
            if messages:
                _insert_many(conn, DeliveryMessageRow.__table__, messages)
        gone = set(lost)
        return {cid: Taken(did, st, now) for cid, (did, st) in got.items() if did not in gone}

    def advance(self, moves: Sequence[tuple[int, datetime, datetime]]) -> int:
        """Set each channel's next due time ``(id, seen, to)`` unless it changed since ``seen``
        was read (see ``ChannelRepo.advance``); one statement. Returns how many were set."""
        if not moves:
            return 0
        params = [dict(cid=c, seen=s, to=t.astimezone(UTC)) for c, s, t in moves]
        with self.engine.begin() as conn:
            if conn.dialect.name == "postgresql":  # one statement, the rows as one JSON text
                return conn.execute(_advance_json(), {"rows": _json_rows(params)}).rowcount
            stmt = (
                update(ChannelRow.__table__)
                .where(
                    ChannelRow.id == bindparam("cid"), ChannelRow.next_due_at == bindparam("seen")
                )
                .values(next_due_at=bindparam("to"))
            )
            return conn.execute(stmt, params).rowcount


def _json_rows(rows: list[dict]) -> str:
    return json.dumps(rows, default=_iso, separators=(",", ":"))


@cache
def _advance_json():  # noqa: ANN202 - a statement, built once
    """``BatchRepo.advance`` on PostgreSQL: ``UPDATE … FROM json_to_recordset(…)``."""
    from sqlalchemy.dialects.postgresql import JSON

    table = ChannelRow.__table__
    given = (
        func.json_to_recordset(cast(bindparam("rows", type_=Text), JSON))
        .table_valued(
            column("cid", Integer),
            column("seen", table.c.next_due_at.type),
            column("to", table.c.next_due_at.type),
        )
        .render_derived(name="given", with_types=True)
    )
    return (
        update(table)
        .where(table.c.id == given.c.cid, table.c.next_due_at == given.c.seen)
        .values(next_due_at=given.c.to)
    )


def _status(c: NewClaim) -> str:
    """A quiet empty day is done at once; a planned digest is about to send its first message
    (marked *sending* with the claim: a take-over asks the platform before posting it again)."""
    if c.quiet and not c.items:
        return EMPTY
    return SENDING if c.parts else CLAIMED


def _position(parts: Sequence[tuple[str, ...]], paper_id: str) -> int | None:
    """The planned message that carries ``paper_id`` (as ``LedgerRepo.plan`` records it)."""
    for n, ids in enumerate(parts):
        if paper_id in ids:
            return n
    return None
