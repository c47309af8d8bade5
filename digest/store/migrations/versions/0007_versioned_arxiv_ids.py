"""Papers stored under a versioned arXiv id (a JSONL ``2301.01234v2``) become one paper per arXiv id.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30

Before 0006 a record whose id is an arXiv id kept that id as given (``2301.01234v2``,
``arXiv:2301.01234``) and no ``arxiv_id``, so two versions of one paper could be two rows and
``paper 2301.01234`` found neither. Each such row is replayed through ingest's own rules, in the
order the rows were stored: under the current shape (id and ``arxiv_id`` the base id, the id's
version in ``arxiv_version``) it is looked up like a new record (``identity.Keys``); a paper it
is the same work as absorbs it as ingest would (``paper_rows.fold``: the earlier-stored row is the
stored one, the later the arriving record, so a later version's text wins and an older never
does), else it is renamed to the base id. Votes, delivered papers, ledger messages and ``like:``
subscriptions that named a removed row are pointed at the paper that stays first (a vote by the
same person on both keeps the newer vote; a paper sent to a channel under both keeps its first
delivery: a channel has a paper once). Downgrade leaves the rows as they are: merged papers
cannot be told apart again.

It calls ingest's live rules on purpose, so a migrated database holds what today's ingest would
have stored; rows are plain namespaces of this revision's columns, so should those rules one day
read a column added later, this file needs a frozen copy of them (its test would then fail).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import sqlalchemy as sa
from alembic import op

from digest.store.identity import Keys, KeyView
from digest.store.paper_rows import fold
from digest.text import arxiv_ref

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def _target(row: Any) -> tuple[str, int | None] | None:
    """(base id, version) for a row whose id is an arXiv id not stored in the current shape."""
    ref = arxiv_ref(row.id)
    if ref is None:
        return None
    base, version = ref
    stale = row.id != base or row.arxiv_id != base
    return ref if stale or (version is not None and row.arxiv_version != version) else None


class _Papers:
    """The papers table as ingest sees it: rows by id, the identity keys, where removed ids went."""

    def __init__(self, conn: sa.Connection, legacy: set[str]) -> None:
        self.conn = conn
        self.table = sa.Table("papers", sa.MetaData(), autoload_with=conn)
        self.cache: dict[str, SimpleNamespace] = {}
        self.moved: dict[str, str] = {}
        self.keys = Keys()
        meta = sa.MetaData()
        self.refs = {
            name: sa.Table(name, meta, autoload_with=conn)
            for name in ("feedback", "delivery_items", "subscriptions", "delivery_messages")
        }
        c = self.table.c
        cols = (c.id, c.arxiv_id, c.openreview_id, c.content_hash, c.title_key, c.title_derived)
        length = sa.func.length(c.abstract).label("abstract_len")
        for row in conn.execute(sa.select(*cols, length)):
            if row.id not in legacy:  # a legacy row is looked up only once it has its new shape
                self.keys.add(row)

    def load(self, paper_id: str) -> SimpleNamespace:
        """A row (all columns) by id, following ids that were merged away."""
        while paper_id in self.moved:
            paper_id = self.moved[paper_id]
        if paper_id not in self.cache:
            stmt = sa.select(self.table).where(self.table.c.id == paper_id)
            self.cache[paper_id] = SimpleNamespace(**self.conn.execute(stmt).one()._asdict())
        return self.cache[paper_id]

    def exists(self, paper_id: str) -> bool:
        stmt = sa.select(self.table.c.id).where(self.table.c.id == paper_id)
        return self.conn.execute(stmt).first() is not None

    def settle(self, keep: SimpleNamespace, gone: list[str]) -> None:
        """Store ``keep`` under its id, point ``gone`` ids' references at it, delete those rows."""
        values = dict(vars(keep))
        if self.exists(keep.id):
            stmt = self.table.update().where(self.table.c.id == keep.id)
            self.conn.execute(stmt.values({k: v for k, v in values.items() if k != "id"}))
        else:
            self.conn.execute(self.table.insert().values(values))
        self.cache[keep.id] = keep
        self.keys.add(KeyView(keep))
        for old in gone:
            if old == keep.id:
                continue
            _repoint(self.conn, self.refs, old, keep.id)
            self.conn.execute(self.table.delete().where(self.table.c.id == old))
            self.cache.pop(old, None)
            self.keys.ids.discard(old)
            self.moved[old] = keep.id


def _order(row: SimpleNamespace) -> tuple:
    """Storage order: rows from before ingest sequences (0003) first, then by sequence."""
    return (row.seq is not None, row.seq or 0, str(row.ingested_at), row.id)


def _absorb(papers: _Papers, legacy_id: str, base: str, version: int | None) -> None:
    """Replay one legacy row as ingest would store it today."""
    row = SimpleNamespace(**vars(papers.load(legacy_id)))
    row.id, row.arxiv_id = base, base
    row.arxiv_version = version or row.arxiv_version
    found = papers.keys.find(row, papers.load)
    if found is None:
        papers.settle(row, [legacy_id])
        return
    other = papers.load(found)
    old, new = (other, row) if _order(other) <= _order(papers.load(legacy_id)) else (row, other)
    old = SimpleNamespace(**vars(old))
    fold(old, new)  # the earlier-stored row takes the later one in, exactly as ingest does
    papers.settle(old, [legacy_id, other.id])


def _repoint(conn: sa.Connection, refs: dict[str, sa.Table], old: str, new: str) -> None:
    """Every reference to paper ``old`` now names ``new`` (no channel gets a paper twice)."""
    _move(conn, refs["feedback"], ("channel_id", "user"), old, new, newest=True)
    _move(conn, refs["delivery_items"], ("channel_id",), old, new, newest=False)
    subs, messages = refs["subscriptions"], refs["delivery_messages"]
    like = subs.c.kind == "like"
    for sub in conn.execute(sa.select(subs).where(like, subs.c.text == old)).all():
        same = sa.select(subs.c.id).where(like, subs.c.channel_id == sub.channel_id)
        if conn.execute(same.where(subs.c.text == new)).first() is not None:
            conn.execute(subs.delete().where(subs.c.id == sub.id))
        else:
            conn.execute(subs.update().where(subs.c.id == sub.id).values(text=new))
    for msg in conn.execute(sa.select(messages.c.id, messages.c.paper_ids)).all():
        if old in (msg.paper_ids or []):
            ids = list(dict.fromkeys(new if p == old else p for p in msg.paper_ids))
            conn.execute(messages.update().where(messages.c.id == msg.id).values(paper_ids=ids))


def _move(
    conn: sa.Connection, table: sa.Table, scope: tuple[str, ...], old: str, new: str, newest: bool
) -> None:
    """Point ``table``'s rows at ``new``; where ``scope`` already has ``new``, one row stays: the
    newest (a person's latest vote) or the first (a paper's first delivery), by row id."""
    for row in conn.execute(sa.select(table).where(table.c.paper_id == old)).all():
        where = [table.c[k] == getattr(row, k) for k in scope]
        twin = conn.execute(sa.select(table.c.id).where(*where, table.c.paper_id == new)).first()
        if twin is not None and (row.id > twin.id) != newest:
            conn.execute(table.delete().where(table.c.id == row.id))
            continue
        if twin is not None:
            conn.execute(table.delete().where(table.c.id == twin.id))
        conn.execute(table.update().where(table.c.id == row.id).values(paper_id=new))


def upgrade() -> None:
    conn = op.get_bind()
    table = sa.Table("papers", sa.MetaData(), autoload_with=conn)
    cols = (table.c.id, table.c.arxiv_id, table.c.arxiv_version, table.c.seq, table.c.ingested_at)
    todo = [(row, ref) for row in conn.execute(sa.select(*cols)) if (ref := _target(row))]
    if not todo:
        return
    papers = _Papers(conn, {row.id for row, _ in todo})
    # Rows already under their base id first: they keep it, so a renamed version finds them.
    todo.sort(key=lambda t: (t[0].id != t[1][0], _order(SimpleNamespace(**t[0]._asdict()))))
    for row, (base, version) in todo:
        _absorb(papers, row.id, base, version)


def downgrade() -> None:
    pass  # merged papers cannot be split again; the rows stay in their current shape
