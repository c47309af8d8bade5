"""Channel settings and subscriptions persistence (votes: digest.store.feedback)."""

from __future__ import annotations

import typing
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    Engine,
    Row,
    Table,
    case,
    cast,
    delete,
    func,
    literal,
    select,
    true,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from digest.clock import Clock, system_clock
from digest.clock.zones import usable_timezone
from digest.models import (
    PERSONAL_MARK,
    Channel,
    ChannelRef,
    Shards,
    Subscription,
    SubscriptionKind,
)
from digest.store.deliveries import _aware
from digest.store.feedback import FeedbackQueries
from digest.store.schema import ChannelRow, SubscriptionRow, look_mark

#: A Discord snowflake's low 22 bits are worker, process and increment; the rest is the time
#: Discord shards guilds by.
SNOWFLAKE_SHIFT = 22


def _shard_clause(shards: Shards) -> ColumnElement[bool]:
    """SQL for both engines: the channels that are this replica's. Discord's rule: a server
    channel is on shard (guild_id >> 22) % count, a DM (``@user``) on shard 0; other
    platforms' channels are everyone's."""
    server = ~ChannelRow.channel_id.startswith(PERSONAL_MARK, autoescape=True)
    shard = case(
        (
            server,
            # // is integer division on both engines (/ would be NUMERIC on PostgreSQL)
            cast(ChannelRow.workspace, BigInteger)
            // literal(1 << SNOWFLAKE_SHIFT, BigInteger)
            % shards.count,
        ),
        else_=0,
    )
    return (ChannelRow.platform != shards.platform) | shard.in_(sorted(shards.ids))


def _mine(shards: Shards | None) -> ColumnElement[bool]:
    return _shard_clause(shards) if shards is not None else true()


SETTINGS = {
    "name",
    "timezone",
    "digest_time",
    "weekdays",
    "digest_size",
    "threshold",
    "paused",
    "paused_reason",
    "quiet_when_empty",
    "threaded",
    "backlog",
    "admin_only",
    "owner_user",
    "weekly",
    "share_votes",
    "public",
}
#: Settings that move a channel's due times (or stop and restart them): changing one marks the
#: channel for the scheduler's next look (see schema.LOOK_NOW).
SCHEDULE = {"timezone", "digest_time", "weekdays", "paused"}


def to_channel(row: ChannelRow | Row) -> Channel:
    """Domain object from a row (mapped, or a plain row of the table's columns)."""
    return Channel(
        id=row.id,
        ref=ChannelRef(row.platform, row.channel_id, row.workspace),
        name=row.name,
        timezone=usable_timezone(row.timezone),  # a zone removed from tzdata must not crash
        digest_time=row.digest_time,
        weekdays=row.weekdays,
        digest_size=row.digest_size,
        threshold=row.threshold,
        paused=row.paused,
        paused_reason=row.paused_reason,
        quiet_when_empty=row.quiet_when_empty,
        threaded=row.threaded,
        backlog=row.backlog,
        admin_only=row.admin_only,
        owner_user=row.owner_user,
        weekly=row.weekly,
        share_votes=row.share_votes,
        public=row.public,
        created_at=_aware(row.created_at),
    )


def _sub(row: SubscriptionRow) -> Subscription:
    return Subscription(
        id=row.id,
        channel_id=row.channel_id,
        kind=SubscriptionKind(row.kind),
        text=row.text,
        created_by=row.created_by,
        created_at=row.created_at,
    )


class ChannelRepo(FeedbackQueries):
    """Reads and writes channels, their subscriptions and their members' feedback."""

    def __init__(self, engine: Engine, clock: Clock = system_clock) -> None:
        self.engine = engine
        self.clock = clock  # stamps rows (ingested, created, voted): the composition root's clock

    def _find(self, session: Session, ref: ChannelRef) -> ChannelRow | None:
        stmt = select(ChannelRow).where(
            ChannelRow.platform == ref.platform,
            ChannelRow.workspace == ref.workspace,
            ChannelRow.channel_id == ref.channel_id,
        )
        return session.scalars(stmt).first()

    def get(self, ref: ChannelRef) -> Channel | None:
        """A channel by platform reference."""
        with Session(self.engine) as session:
            row = self._find(session, ref)
            return to_channel(row) if row else None

    def by_id(self, channel_id: int) -> Channel | None:
        """A channel by database id."""
        with Session(self.engine) as session:
            row = session.get(ChannelRow, channel_id)
            return to_channel(row) if row else None

    def ensure(self, ref: ChannelRef, **defaults: Any) -> Channel:
        """The channel for ``ref``, created with ``defaults`` if it is new (race-safe)."""
        with Session(self.engine) as session:
            row = self._find(session, ref)
            if row is not None:
                return to_channel(row)
            fields = {k: v for k, v in defaults.items() if k in SETTINGS}
            session.add(
                ChannelRow(
                    platform=ref.platform,
                    workspace=ref.workspace,
                    channel_id=ref.channel_id,
                    created_at=self.clock(),
                    **fields,
                )
            )
            try:
                session.commit()
            except IntegrityError:  # another process created it first
                session.rollback()
            return to_channel(self._find(session, ref))

    def update(self, channel_id: int, **fields: Any) -> Channel:
        """Change settings; unknown names are a programming error."""
        unknown = set(fields) - SETTINGS
        if unknown:
            raise ValueError(f"unknown channel settings: {sorted(unknown)}")
        with Session(self.engine, expire_on_commit=False) as session:
            row = session.get(ChannelRow, channel_id)
            for key, value in fields.items():
                setattr(row, key, value)
            if SCHEDULE & set(fields):
                row.next_due_at = look_mark()
            session.commit()
            return to_channel(row)

    def look(self, session: Session | Connection, channel_id: int) -> None:
        """Mark a channel for the scheduler's next look, in ``session``'s transaction: what was
        just changed (a first topic, a 👍) may make a digest owed that was skipped."""
        session.execute(
            update(ChannelRow).where(ChannelRow.id == channel_id).values(next_due_at=look_mark())
        )

    def due(
        self, now: datetime, platforms: set[str], shards: Shards | None = None
    ) -> list[tuple[Channel, datetime]]:
        """Active channels on ``platforms`` (of a sharded one, those on ``shards``) whose next
        due time has come, with the mark read (what ``advance`` compares against); earliest
        first. Reads the due index only."""
        stmt = (
            select(ChannelRow)
            .where(
                ChannelRow.paused.is_(False),
                ChannelRow.next_due_at <= now.astimezone(UTC),  # SQLite keeps no zone: UTC
                ChannelRow.platform.in_(sorted(platforms)),
                _mine(shards),
            )
            .order_by(ChannelRow.next_due_at, ChannelRow.id)
        )
        with Session(self.engine) as session:
            return [(to_channel(r), r.next_due_at) for r in session.scalars(stmt)]

    def _due_now(
        self, now: datetime, platforms: set[str], shards: Shards | None
    ) -> list[ColumnElement[bool]]:
        return [
            ChannelRow.paused.is_(False),
            ChannelRow.next_due_at <= now.astimezone(UTC),  # SQLite keeps no zone: UTC
            ChannelRow.platform.in_(sorted(platforms)),
            _mine(shards),
        ]

    def count_due(self, now: datetime, platforms: set[str], shards: Shards | None = None) -> int:
        """How many channels ``due`` would return (the due index only)."""
        stmt = (
            select(func.count())
            .select_from(ChannelRow)
            .where(*self._due_now(now, platforms, shards))
        )
        with Session(self.engine) as session:
            return session.scalar(stmt) or 0

    def take(
        self,
        now: datetime,
        platforms: set[str],
        limit: int,
        hold: datetime,
        shards: Shards | None = None,
    ) -> list[tuple[Channel, datetime]]:
        """Take up to ``limit`` of the channels ``due`` would return, earliest first: each one's
        next due time is set to ``hold`` in the same statement, so no other replica takes it
        meanwhile, and it is due again at ``hold`` if this one dies before moving it on. With
        the mark now held (what ``advance`` compares against). On PostgreSQL rows another
        replica is taking are skipped (``SKIP LOCKED``), not waited for."""
        pick = (
            select(ChannelRow.id)
            .where(*self._due_now(now, platforms, shards))
            .order_by(ChannelRow.next_due_at, ChannelRow.id)
            .limit(limit)
            .with_for_update(skip_locked=True)  # SQLite: nothing (one writer at a time)
        )
        table = typing.cast(Table, ChannelRow.__table__)
        stmt = (
            update(table)
            .where(table.c.id.in_(pick.scalar_subquery()))
            .values(next_due_at=hold.astimezone(UTC))
            .returning(*table.c)  # plain rows: no ORM objects to build for thousands
        )
        with self.engine.begin() as conn:
            taken = [(to_channel(r), r.next_due_at) for r in conn.execute(stmt)]
        return sorted(taken, key=lambda t: t[0].id)

    def next_due_time(self, platforms: set[str], shards: Shards | None = None) -> datetime | None:
        """The earliest next due time of an active channel on ``platforms`` and ``shards`` (UTC)."""
        stmt = (
            select(ChannelRow.next_due_at)
            .where(
                ChannelRow.paused.is_(False),
                ChannelRow.platform.in_(sorted(platforms)),
                _mine(shards),
            )
            .order_by(ChannelRow.next_due_at)
            .limit(1)
        )
        with Session(self.engine) as session:
            when = session.scalar(stmt)
        return _aware(when) if when is not None else None

    def advance(self, channel_id: int, seen: datetime, to: datetime) -> bool:
        """Set a channel's next due time to ``to`` unless it changed since ``seen`` was read (a
        settings change meanwhile keeps its fresh mark); True if it was set."""
        stmt = (
            update(ChannelRow)
            .where(ChannelRow.id == channel_id, ChannelRow.next_due_at == seen)
            .values(next_due_at=to.astimezone(UTC))  # SQLite keeps no zone: always UTC
        )
        with Session(self.engine) as session:
            n = session.execute(stmt).rowcount
            session.commit()
        return n == 1

    def pause_workspace(self, platform: str, workspace: str, reason: str) -> int:
        """Pause every active channel of one workspace with ``reason`` (the app was removed from
        it), in one statement; marked for the scheduler as any pause is. Returns how many."""
        stmt = (
            update(ChannelRow)
            .where(
                ChannelRow.platform == platform,
                ChannelRow.workspace == workspace,
                ChannelRow.paused.is_(False),
            )
            .values(paused=True, paused_reason=reason, next_due_at=look_mark())
        )
        with Session(self.engine) as session:
            n = session.execute(stmt).rowcount
            session.commit()
        return n

    def _listed(self, *where: ColumnElement[bool]) -> list[Channel]:
        """The channels that meet ``where``, oldest (the lowest id) first."""
        stmt = select(ChannelRow).where(*where).order_by(ChannelRow.id)
        with Session(self.engine) as session:
            return [to_channel(r) for r in session.scalars(stmt)]

    def with_channel_id(self, platform: str, channel_id: str) -> list[Channel]:
        """Every channel of a platform with this channel id, whatever its workspace; oldest first."""
        return self._listed(ChannelRow.platform == platform, ChannelRow.channel_id == channel_id)

    def all(self) -> list[Channel]:
        """Every channel, in creation order."""
        return self._listed()

    def add_subscription(
        self, channel_id: int, kind: SubscriptionKind, text: str, user: str | None = None
    ) -> bool:
        """Add a profile line; False when the channel already had it."""
        with Session(self.engine) as session:
            session.add(
                SubscriptionRow(
                    channel_id=channel_id,
                    kind=kind.value,
                    text=text,
                    created_by=user,
                    created_at=self.clock(),
                )
            )
            try:
                session.flush()
            except IntegrityError:
                return False
            self.look(session, channel_id)
            session.commit()
            return True

    def subscriptions(self, channel_id: int) -> list[Subscription]:
        """A channel's profile lines in the order they were added."""
        stmt = (
            select(SubscriptionRow)
            .where(SubscriptionRow.channel_id == channel_id)
            .order_by(SubscriptionRow.id)
        )
        with Session(self.engine) as session:
            return [_sub(r) for r in session.scalars(stmt)]

    def remove_subscriptions(self, channel_id: int, ids: list[int]) -> int:
        """Delete the given profile lines; returns how many went."""
        stmt = delete(SubscriptionRow).where(
            SubscriptionRow.channel_id == channel_id, SubscriptionRow.id.in_(ids)
        )
        with Session(self.engine) as session:
            n = session.execute(stmt).rowcount
            session.commit()
            return n

    def in_workspace(self, platform: str, workspace: str) -> list[Channel]:
        """Every channel of one workspace (a Slack team, a Discord server), oldest first."""
        return self._listed(ChannelRow.platform == platform, ChannelRow.workspace == workspace)
