"""Papers stored under a versioned arXiv id (a JSONL ``2301.01234v2``) become one paper per arXiv id.

Revision ID: 0008
Revises: 0007
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
same person on both keeps the one cast last; a paper sent to a channel under both keeps its first
delivery: a channel has a paper once). A renamed row keeps the BibTeX key 0007 issued under its
old id (the key pasted from its exports); of rows folded together, the earlier-stored one's key
stays. Downgrade leaves the rows as they are: merged papers cannot be told apart again.

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
from digest.text.arxiv_ids import arxiv_ref

revision = "0008"
down_revision = "0007"
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
    """The papers table as ingest sees it: the identity keys, and where removed ids went.

    Rows are read from the table when needed, not cached, so legacy abstracts are not all held
    in memory; removed rows stay in the table until their references have moved (``gone``)."""

    def __init__(self, conn: sa.Connection, legacy: set[str]) -> None:
        self.conn = conn
        self.table = sa.Table("papers", sa.MetaData(), autoload_with=conn)
        self.moved: dict[str, str] = {}
        self.gone: set[str] = set()
        self.keys = Keys()
        c = self.table.c
        cols = (c.id, c.arxiv_id, c.openreview_id, c.content_hash, c.title_key, c.title_derived)
        length = sa.func.length(c.abstract).label("abstract_len")
        for row in conn.execute(sa.select(*cols, length)):
            if row.id not in legacy:  # a legacy row is looked up only once it has its new shape
                self.keys.add(row)

    def load(self, paper_id: str) -> SimpleNamespace:
        """A row (all columns) by id, following ids that were merged away."""
        paper_id = self.final(paper_id)
        stmt = sa.select(self.table).where(self.table.c.id == paper_id)
        return SimpleNamespace(**self.conn.execute(stmt).one()._asdict())

    def final(self, paper_id: str) -> str:
        """The id that ``paper_id`` now lives under."""
        seen = set()
        while paper_id in self.moved and paper_id not in seen:
            seen.add(paper_id)
            paper_id = self.moved[paper_id]
        return paper_id

    def settle(self, keep: SimpleNamespace, gone: list[str]) -> None:
        """Store ``keep`` under its id; ``gone`` ids now mean it (their rows are removed later)."""
        values = dict(vars(keep))
        found = sa.select(self.table.c.id).where(self.table.c.id == keep.id)
        if self.conn.execute(found).first() is not None:
            stmt = self.table.update().where(self.table.c.id == keep.id)
            self.conn.execute(stmt.values({k: v for k, v in values.items() if k != "id"}))
        else:
            self.conn.execute(self.table.insert().values(values))
        self.gone.discard(keep.id)
        self.moved.pop(keep.id, None)
        self.keys.add(KeyView(keep))
        for old in gone:
            if old != keep.id:
                self.keys.ids.discard(old)
                self.moved[old] = keep.id
                self.gone.add(old)


def _order(row: SimpleNamespace) -> tuple:
    """Storage order: rows from before ingest sequences (0003) first, then by sequence."""
    return (row.seq is not None, row.seq or 0, str(row.ingested_at), row.id)


def _absorb(papers: _Papers, legacy_id: str, base: str, version: int | None) -> None:
    """Replay one legacy row as ingest would store it today."""
    stored = papers.load(legacy_id)
    row = SimpleNamespace(**vars(stored))
    row.id, row.arxiv_id = base, base
    row.arxiv_version = version or row.arxiv_version
    found = papers.keys.find(row, papers.load)
    if found is None:
        papers.settle(row, [legacy_id])
        return
    other = papers.load(found)
    old, new = (other, row) if _order(other) <= _order(stored) else (row, other)
    old = SimpleNamespace(**vars(old))
    fold(old, new)  # the earlier-stored row takes the later one in, exactly as ingest does
    papers.settle(old, [legacy_id, other.id])


def _repoint(conn: sa.Connection, moved: dict[str, str]) -> None:
    """Every reference to a removed paper names the paper it went to, one pass a table."""
    meta = sa.MetaData()
    refs = {
        name: sa.Table(name, meta, autoload_with=conn)
        for name in ("feedback", "delivery_items", "subscriptions", "delivery_messages")
    }
    _move(conn, refs["feedback"], moved, ("channel_id", "user"), _newest_vote)
    _move(conn, refs["delivery_items"], moved, ("channel_id",), _first_delivery)
    subs = refs["subscriptions"]
    _move(conn, subs, moved, ("channel_id",), _first_like, "text", subs.c.kind == "like")
    messages = refs["delivery_messages"]
    changed = []
    for msg in conn.execute(sa.select(messages.c.id, messages.c.paper_ids)).all():
        ids = msg.paper_ids or []
        if any(p in moved for p in ids):
            new = list(dict.fromkeys(moved.get(p, p) for p in ids))
            changed.append({"mid": msg.id, "ids": new})
    if changed:
        ids = sa.bindparam("ids", type_=messages.c.paper_ids.type)
        stmt = messages.update().where(messages.c.id == sa.bindparam("mid")).values(paper_ids=ids)
        conn.execute(stmt, changed)


def _newest_vote(row: Any) -> tuple:
    """A person's vote in force: the last cast (a re-vote keeps its row id but renews
    created_at), then the later row."""
    return (row.created_at is not None, row.created_at or 0, row.id)


def _first_delivery(row: Any) -> tuple:
    """A channel has a paper once: its first delivery (the lowest row id) stays."""
    return (-row.id,)


def _first_like(row: Any) -> tuple:
    """A ``like:`` already naming the paper stays, else the first one."""
    return (0 if row.moving else 1, -row.id)


def _move(
    conn: sa.Connection,
    table: sa.Table,
    moved: dict[str, str],
    scope: tuple[str, ...],
    rank: Any,
    col: str = "paper_id",
    where: Any = None,
) -> None:
    """Point ``table``'s ``col`` at the ids in ``moved``; where ``scope`` then holds one paper
    more than once, only the row ranked highest stays."""
    targets = set(moved) | set(moved.values())
    groups: dict[tuple, list[SimpleNamespace]] = {}
    for row in conn.execute(sa.select(table).where(sa.true() if where is None else where)):
        if (ref := getattr(row, col)) in targets:
            item = SimpleNamespace(**row._asdict(), moving=ref in moved)
            key = (*(getattr(row, k) for k in scope), moved.get(ref, ref))
            groups.setdefault(key, []).append(item)
    drop, point = [], []
    for key, rows in groups.items():
        keep = max(rows, key=rank)
        drop += [r.id for r in rows if r is not keep]
        if keep.moving:
            point.append({"rid": keep.id, "to": key[-1]})
    for i in range(0, len(drop), 500):  # deleted first: the unique (scope, paper) keys are free
        conn.execute(table.delete().where(table.c.id.in_(drop[i : i + 500])))
    if point:
        stmt = table.update().where(table.c.id == sa.bindparam("rid"))
        conn.execute(stmt.values({col: sa.bindparam("to")}), point)


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
    moved = {old: papers.final(old) for old in papers.gone}
    _repoint(conn, moved)  # before the rows go: their ON DELETE CASCADE would drop the votes
    gone = sorted(papers.gone)
    for i in range(0, len(gone), 500):
        conn.execute(table.delete().where(table.c.id.in_(gone[i : i + 500])))


def downgrade() -> None:
    pass  # merged papers cannot be split again; the rows stay in their current shape
