"""Leases in the database's clock: which replicas are running, and which one owns each shard.

A running replica renews its presence row (``replica:<worker>``) every few seconds; the replicas
whose row has not lapsed are the live ones, which a scheduler tick shares due digests out among.
A sharded platform's shards are leased the same way (``discord:shard:<n>``): each live replica
takes free or lapsed shards up to its fair share (the shard count over the live replicas,
rounded up), renews those it holds, and gives back any beyond its share when more replicas run.
A replica that dies stops renewing, and the next live replica to renew takes its shards over.

Every time is the database's (``db_now``), never a replica's own clock; a take-over is one
conditional UPDATE on the row (owner empty or lease lapsed), so two replicas never both take it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Connection, Engine, delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from digest.store.deliveries import db_now
from digest.store.schema import KeyValueRow, LeaseRow

#: A presence row's name prefix (the worker's name follows).
REPLICA = "replica:"
#: PostgreSQL advisory lock key serialising shard renewals (replicas renew every few seconds, a
#: few statements each: waiting is cheap, and two renewals cannot lock shard rows in a cycle).
SHARD_LOCK = 0x5A4D_0001


def _insert_ignore(conn: Connection, rows: list[dict]):  # noqa: ANN202 - a statement
    """INSERT of ``rows`` into leases, skipping names that exist (both engines)."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(LeaseRow).values(rows).on_conflict_do_nothing(index_elements=["name"])
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(LeaseRow).values(rows).on_conflict_do_nothing(index_elements=["name"])


def shard_name(platform: str, shard: int) -> str:
    """A shard's lease row name."""
    return f"{platform}:shard:{shard}"


def count_key(platform: str) -> str:
    """Where the platform's shard count is kept (the kv table), shared by every replica."""
    return f"{platform}.shard_count"


@dataclass(frozen=True)
class ShardHold:
    """What one renewal answered: the shards this replica holds of ``count``, the live replicas
    counted, and when (database clock) the leases it holds lapse unless renewed."""

    ids: frozenset[int]
    count: int
    live: int
    until: datetime | None


@dataclass(frozen=True)
class Holder:
    """One shard's lease as stored (for ``digestbot shards``)."""

    shard: int
    owner: str | None
    until: datetime | None
    live: bool


def _aware(value: datetime | str | None) -> datetime | None:
    """A stored or computed time as aware UTC (SQLite answers with naive text)."""
    if value is None:
        return None
    at = datetime.fromisoformat(value) if isinstance(value, str) else value
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


class LeaseRepo:
    """Presence and shard leases."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _now(self, seconds: float = 0.0):  # noqa: ANN202 - a SQL expression
        return db_now(self.engine, seconds)

    def _put(self, conn: Connection, name: str, owner: str, ttl: float) -> None:
        """Renew ``owner``'s row ``name`` (made if missing)."""
        done = conn.execute(
            update(LeaseRow).where(LeaseRow.name == name).values(owner=owner, until=self._now(ttl))
        ).rowcount
        if not done:
            conn.execute(insert(LeaseRow).values(name=name, owner=owner, until=self._now(ttl)))

    def beat(self, worker: str, ttl: float) -> int:
        """Renew this replica's presence for ``ttl`` seconds; the live replicas (this one too).
        Rows of replicas long gone (lapsed) are removed as it goes."""
        with self.engine.begin() as conn:
            self._put(conn, REPLICA + worker, worker, ttl)
            conn.execute(
                delete(LeaseRow).where(
                    LeaseRow.name.startswith(REPLICA), LeaseRow.until < self._now(-ttl)
                )
            )
            return self._live(conn)

    def _live(self, conn: Connection) -> int:
        stmt = select(func.count()).where(
            LeaseRow.name.startswith(REPLICA), LeaseRow.until >= self._now()
        )
        return max(1, conn.execute(stmt).scalar_one())

    def live(self) -> int:
        """How many replicas renewed their presence and have not lapsed (at least 1: the asker)."""
        with self.engine.connect() as conn:
            return self._live(conn)

    def leave(self, worker: str) -> None:
        """A clean stop: presence and every shard held given back at once (no wait for lapse)."""
        with self.engine.begin() as conn:
            conn.execute(delete(LeaseRow).where(LeaseRow.name == REPLICA + worker))
            conn.execute(
                update(LeaseRow)
                .where(LeaseRow.owner == worker, LeaseRow.name.not_like(REPLICA + "%"))
                .values(owner=None, until=None)
            )

    def shard_count(self, platform: str, default: int) -> int:
        """The platform's shard count as the database holds it; ``default`` is stored first if
        none is (every replica then reads the same count)."""
        with self.engine.begin() as conn:
            key = count_key(platform)
            value = conn.execute(select(KeyValueRow.value).where(KeyValueRow.key == key)).scalar()
            if value is not None:
                return int(value)
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(KeyValueRow).values(key=key, value=str(default)))
        except IntegrityError:  # another replica stored one first: theirs counts
            return self.shard_count(platform, default)
        return default

    def set_shard_count(self, platform: str, count: int) -> None:
        """Change the shard count for every replica (each re-leases at its next renewal)."""
        with self.engine.begin() as conn:
            key = count_key(platform)
            if not conn.execute(
                update(KeyValueRow).where(KeyValueRow.key == key).values(value=str(count))
            ).rowcount:
                conn.execute(insert(KeyValueRow).values(key=key, value=str(count)))

    def shards(self, platform: str, worker: str, count: int, ttl: float) -> ShardHold:
        """Renew the shards ``worker`` holds, take free or lapsed ones up to its fair share,
        and give back those beyond it (the highest first); what it holds now.

        Also renews its presence (the fair share counts it). Shards at or above ``count`` (the
        count went down) are forgotten."""
        with self.engine.begin() as conn:
            if conn.dialect.name == "postgresql":  # one renewal at a time: no lock cycles
                conn.execute(select(func.pg_advisory_xact_lock(SHARD_LOCK)))
            self._put(conn, REPLICA + worker, worker, ttl)
            live = self._live(conn)
            names = {shard_name(platform, n): n for n in range(count)}
            prefix = f"{platform}:shard:"
            rows = conn.execute(
                select(LeaseRow.name, LeaseRow.owner).where(LeaseRow.name.startswith(prefix))
            ).all()
            gone = [name for name, _ in rows if name not in names]
            if gone:
                conn.execute(delete(LeaseRow).where(LeaseRow.name.in_(gone)))
            missing = set(names) - {name for name, _ in rows}
            if missing:  # a replica racing us may make them first: theirs are the same
                made = [dict(name=name, owner=None, until=None, fence=0) for name in missing]
                conn.execute(_insert_ignore(conn, made))
            mine = sorted(names[name] for name, owner in rows if owner == worker and name in names)
            share = math.ceil(count / live)
            for n in mine[share:][::-1]:  # more replicas now: give the extra back
                conn.execute(
                    update(LeaseRow)
                    .where(LeaseRow.name == shard_name(platform, n), LeaseRow.owner == worker)
                    .values(owner=None, until=None)
                )
            held = set(mine[:share])
            if held:
                conn.execute(
                    update(LeaseRow)
                    .where(
                        LeaseRow.name.in_([shard_name(platform, n) for n in held]),
                        LeaseRow.owner == worker,
                    )
                    .values(until=self._now(ttl))
                )
            for n in range(count):
                if len(held) >= share:
                    break
                if n in held:
                    continue
                took = conn.execute(
                    update(LeaseRow)
                    .where(
                        LeaseRow.name == shard_name(platform, n),
                        or_(
                            LeaseRow.owner.is_(None),
                            LeaseRow.until.is_(None),
                            LeaseRow.until < self._now(),
                        ),
                    )
                    .values(owner=worker, until=self._now(ttl), fence=LeaseRow.fence + 1)
                ).rowcount
                if took:
                    held.add(n)
            until = conn.execute(select(self._now(ttl))).scalar_one()
        return ShardHold(frozenset(held), count, live, _aware(until) if held else None)

    def holders(self, platform: str) -> list[Holder]:
        """Each shard's lease as stored, by shard."""
        prefix = f"{platform}:shard:"
        with self.engine.connect() as conn:
            now = _aware(conn.execute(select(self._now())).scalar_one())
            assert now is not None  # the database's clock always answers
            rows = conn.execute(
                select(LeaseRow.name, LeaseRow.owner, LeaseRow.until).where(
                    LeaseRow.name.startswith(prefix)
                )
            ).all()
        out = []
        for name, owner, until in rows:
            lapses = _aware(until)
            live = owner is not None and lapses is not None and lapses >= now
            out.append(Holder(int(name[len(prefix) :]), owner, lapses, live))
        return sorted(out, key=lambda h: h.shard)
