"""Export and import of everything a deployment knows about its users, as one JSON document.

Channels, subscriptions, feedback and delivery history (digests and weekly pictures) move between
databases (SQLite to PostgreSQL, or between hosts) without loss; papers are re-ingested from their sources, and any
paper a vote, delivery or `like:` refers to travels along so nothing dangles, as does every
library paper (read from someone's own file, no source would bring it back).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import DateTime, MetaData, Table, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from digest.clock.times import parse_time, parse_weekdays
from digest.clock.zones import parse_timezone
from digest.errors import DigestError
from digest.models import LIBRARY_SOURCE, DeliveryKind, DeliveryState, SubscriptionKind
from digest.store import Store
from digest.store.schema import (
    ChannelRow,
    DeliveryItemRow,
    DeliveryRow,
    FeedbackRow,
    MentionOptInRow,
    PaperRow,
    SubscriptionRow,
)

FORMAT = "digestbot-export/1"
#: Deliveries carry weekly pictures too: a week's picture already sent is not sent again from
#: the new database.
#: Mention opt-ins are what people told the bot too (after channels: they name two of them).
TABLES = (ChannelRow, SubscriptionRow, DeliveryRow, DeliveryItemRow, FeedbackRow, MentionOptInRow)


def _row(obj: Any) -> dict[str, Any]:
    out = {}
    for col in obj.__table__.columns:
        value = getattr(obj, col.key)
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)  # SQLite returns naive times; all of ours are UTC
        out[col.key] = value.isoformat() if isinstance(value, date | datetime) else value
    return out


def export_state(store: Store, secret_tables: tuple[str, ...] = ()) -> dict[str, Any]:
    """Everything user-made, plus the papers it refers to, plus ``secret_tables`` verbatim.

    Secret tables (e.g. a chat platform's installations with their tokens) travel only when the
    caller names them: the file then holds credentials and must be kept like them.
    """
    with Session(store.engine) as session:
        data = {
            t.__tablename__: [_row(r) for r in session.scalars(select(t).order_by(t.id))]
            for t in TABLES
        }
        referenced = (
            {r["paper_id"] for r in data["delivery_items"]}
            | {r["paper_id"] for r in data["feedback"]}
            | {r["text"] for r in data["subscriptions"] if r["kind"] == SubscriptionKind.LIKE}
        )
        # followed papers too: a `like:` names a paper id, and without it the import dangles
        wanted = PaperRow.source == LIBRARY_SOURCE
        if referenced:
            wanted = wanted | PaperRow.id.in_(referenced)
        papers = session.scalars(select(PaperRow).where(wanted).order_by(PaperRow.id))
        data["papers"] = [_row(p) for p in papers]
    if secret_tables:
        data["secrets"] = _dump_tables(store, secret_tables)
    return {"format": FORMAT, **data}


def _reflect(store: Store, names) -> list[Table]:
    meta = MetaData()
    meta.reflect(store.engine, only=list(names))
    return [meta.tables[n] for n in names]


def _dump_tables(store: Store, names: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    """Rows of tables outside the ORM (read by reflection), JSON-ready."""
    out = {}
    with store.engine.connect() as conn:
        for table in _reflect(store, names):
            rows = conn.execute(select(table)).mappings()
            out[table.name] = [
                {k: v.isoformat() if isinstance(v, date | datetime) else v for k, v in r.items()}
                for r in rows
            ]
    return out


def _load_tables(store: Store, session: Session, secrets: dict[str, Any]) -> dict[str, int]:
    """Insert exported secret tables' rows (times parsed back) into the same tables here."""
    counts = {}
    for table in _reflect(store, list(secrets)) if secrets else []:
        rows = [
            {c.name: _secret_value(c, r.get(c.name)) for c in table.columns if c.name in r}
            for r in secrets[table.name]
        ]
        try:
            if rows:
                session.execute(table.insert(), rows)
        except IntegrityError as exc:
            raise DigestError(
                f"{table.name}: rows already present here; nothing imported."
            ) from exc
        counts[table.name] = len(rows)
    return counts


def _secret_value(column: Any, value: Any) -> Any:
    if value is not None and isinstance(column.type, DateTime):
        return datetime.fromisoformat(value)
    return value


def _one_of(kind: type[StrEnum]) -> Callable[[str], None]:
    """A check that a stored value is one of ``kind``'s (an unknown state would silently count
    as that day's or week's claim)."""

    def check(value: str) -> None:
        if value not in set(kind):
            known = ", ".join(kind)
            raise DigestError(
                f"not a delivery {kind.__name__[8:].lower()}: {value[:40]!r} ({known})."
            )

    return check


#: Values the store holds as text but the scheduler parses: refused at import like any bad field.
CHECKS = {
    ("channels", "timezone"): parse_timezone,
    ("channels", "digest_time"): parse_time,
    ("channels", "weekdays"): parse_weekdays,
    ("deliveries", "status"): _one_of(DeliveryState),
    ("deliveries", "kind"): _one_of(DeliveryKind),
}


def _parse(table: Any, row: Any, n: int) -> dict[str, Any]:
    """One exported row as column values; a bad one is a DigestError naming table, row, column."""
    where = f"{table.__tablename__} row {n}"
    if not isinstance(row, dict):
        raise DigestError(f"{where}: expected an object, got {type(row).__name__}.")
    out = {}
    for col in table.__table__.columns:
        value = row.get(col.key)
        if value is None:
            if not col.nullable and col.server_default is None and not col.primary_key:
                raise DigestError(f"{where}: missing {col.key!r}.")
            out[col.key] = None
            continue
        out[col.key] = _value(col, value, f"{where}, {col.key!r}")
        check = CHECKS.get((table.__tablename__, col.key))
        if check is not None:
            try:
                check(out[col.key])
            except DigestError as exc:  # e.g. 'Mars/Base' would crash scheduling later
                raise DigestError(f"{where}, {col.key!r}: {exc}") from None
    return out


def _value(col: Any, value: Any, where: str) -> Any:
    py = col.type.python_type
    try:
        if py is datetime:
            return datetime.fromisoformat(value)
        if py is date:
            return date.fromisoformat(value)
    except (TypeError, ValueError):
        raise DigestError(f"{where}: not a date/time: {str(value)[:40]!r}.") from None
    if py is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise DigestError(f"{where}: expected a whole number, got {str(value)[:40]!r}.")
    if py is float and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise DigestError(f"{where}: expected a number, got {str(value)[:40]!r}.")
    if py is str and not isinstance(value, str):
        raise DigestError(f"{where}: expected text, got {str(value)[:40]!r}.")
    if py is bool and not isinstance(value, bool):
        raise DigestError(f"{where}: expected true or false, got {str(value)[:40]!r}.")
    return value


def _rows(doc: dict[str, Any], table: Any) -> list[dict[str, Any]]:
    """A table's exported rows, parsed and checked (no two with the same id)."""
    raw = doc.get(table.__tablename__, [])
    if not isinstance(raw, list):
        raise DigestError(f"{table.__tablename__}: expected a list of rows.")
    rows = [_parse(table, r, n) for n, r in enumerate(raw, 1)]
    ids = [r["id"] for r in rows]
    if len(ids) != len(set(ids)):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise DigestError(f"{table.__tablename__}: id {dup!r} appears twice; nothing was imported.")
    return rows


def import_state(
    store: Store, doc: dict[str, Any], secret_tables: tuple[str, ...] = ()
) -> dict[str, int]:
    """Load an export into an empty deployment (ids kept); refuses to merge into existing channels.

    A ``secrets`` section is loaded only into the ``secret_tables`` the caller allows, in the
    same transaction as the rest: either everything is imported or nothing.
    """
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise DigestError(f"Not a digestbot export (expected format {FORMAT!r}).")
    secrets = doc.get("secrets", {})
    if not isinstance(secrets, dict) or not set(secrets) <= set(secret_tables):
        raise DigestError("The export's secrets section holds tables this deployment refuses.")
    with Session(store.engine) as session:
        if session.scalar(select(ChannelRow.id).limit(1)) is not None:
            raise DigestError("This database already has channels; import into an empty one.")
        counts = _load_rows(session, doc)
        counts |= _load_tables(store, session, secrets)
        session.commit()
    _reset_sequences(store, tuple(secrets))
    return counts


def _load_rows(session: Session, doc: dict[str, Any]) -> dict[str, int]:
    """Papers (those not stored here yet), then user tables parents first; checked row by row."""
    known = set(session.scalars(select(PaperRow.id)))
    counts = {}
    for table in (PaperRow, *TABLES):
        rows = _rows(doc, table)
        if table is PaperRow:  # cited papers only; they never become digest candidates again
            rows = [r | {"seq": None} for r in rows if r["id"] not in known]
        session.add_all(table(**r) for r in rows)
        try:
            session.flush()  # parents before children (foreign keys)
        except IntegrityError as exc:
            reason = str(exc.orig).strip().splitlines()[0] if exc.orig else "constraint"
            raise DigestError(
                f"{table.__tablename__}: duplicate or dangling rows ({reason}); nothing was imported."
            ) from None
        counts[table.__tablename__] = len(rows)
    return counts


def _reset_sequences(store: Store, extra: tuple[str, ...] = ()) -> None:
    """PostgreSQL sequences must continue after the imported ids (SQLite does this itself)."""
    if store.engine.dialect.name != "postgresql":
        return
    from sqlalchemy import text

    with store.engine.begin() as conn:
        for name in [t.__tablename__ for t in TABLES] + list(extra):
            conn.execute(
                text(
                    f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                    f"COALESCE((SELECT MAX(id) FROM {name}), 0) + 1, false)"
                )
            )


def dumps(doc: dict[str, Any]) -> str:
    """The export as JSON text."""
    return json.dumps(doc, ensure_ascii=False, indent=1)
