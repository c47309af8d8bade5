"""Export and import of everything a deployment knows about its users, as one JSON document.

Channels, subscriptions, feedback and delivery history move between databases (SQLite to
PostgreSQL, or between hosts) without loss; papers are re-ingested from their sources, and any
paper a vote or delivery refers to travels along so nothing dangles.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from digest.errors import DigestError
from digest.store import Store
from digest.store.schema import (
    ChannelRow,
    DeliveryItemRow,
    DeliveryRow,
    FeedbackRow,
    PaperRow,
    SubscriptionRow,
)

FORMAT = "digestbot-export/1"
TABLES = (ChannelRow, SubscriptionRow, DeliveryRow, DeliveryItemRow, FeedbackRow)


def _row(obj: Any) -> dict[str, Any]:
    out = {}
    for col in obj.__table__.columns:
        value = getattr(obj, col.key)
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)  # SQLite returns naive times; all of ours are UTC
        out[col.key] = value.isoformat() if isinstance(value, date | datetime) else value
    return out


def export_state(store: Store) -> dict[str, Any]:
    """Everything user-made, plus the papers it refers to."""
    with Session(store.engine) as session:
        data = {
            t.__tablename__: [_row(r) for r in session.scalars(select(t).order_by(t.id))]
            for t in TABLES
        }
        referenced = {r["paper_id"] for r in data["delivery_items"]} | {
            r["paper_id"] for r in data["feedback"]
        }
        papers = (
            session.scalars(select(PaperRow).where(PaperRow.id.in_(referenced)))
            if referenced
            else []
        )
        data["papers"] = [_row(p) for p in papers]
    return {"format": FORMAT, **data}


def _parse(table: Any, row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for col in table.__table__.columns:
        value = row.get(col.key)
        py = col.type.python_type if value is not None else None
        if py is datetime:
            value = datetime.fromisoformat(value)
        elif py is date:
            value = date.fromisoformat(value)
        out[col.key] = value
    return out


def import_state(store: Store, doc: dict[str, Any]) -> dict[str, int]:
    """Load an export into an empty deployment (ids kept); refuses to merge into existing channels."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise DigestError(f"Not a digestbot export (expected format {FORMAT!r}).")
    counts = {}
    with Session(store.engine) as session:
        if session.scalar(select(ChannelRow.id).limit(1)) is not None:
            raise DigestError("This database already has channels; import into an empty one.")
        known = set(session.scalars(select(PaperRow.id)))
        papers = [p for p in doc.get("papers", []) if p["id"] not in known]
        session.add_all(PaperRow(**_parse(PaperRow, p)) for p in papers)
        counts["papers"] = len(papers)
        session.flush()
        for table in TABLES:
            rows = doc.get(table.__tablename__, [])
            session.add_all(table(**_parse(table, r)) for r in rows)
            session.flush()  # parents before children (foreign keys)
            counts[table.__tablename__] = len(rows)
        session.commit()
    _reset_sequences(store)
    return counts


def _reset_sequences(store: Store) -> None:
    """PostgreSQL sequences must continue after the imported ids (SQLite does this itself)."""
    if store.engine.dialect.name != "postgresql":
        return
    from sqlalchemy import text

    with store.engine.begin() as conn:
        for table in TABLES:
            name = table.__tablename__
            conn.execute(text(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                              f"COALESCE((SELECT MAX(id) FROM {name}), 0) + 1, false)"))  # fmt: skip


def dumps(doc: dict[str, Any]) -> str:
    """The export as JSON text."""
    return json.dumps(doc, ensure_ascii=False, indent=1)
