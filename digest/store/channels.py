"""Channel settings, subscriptions and feedback persistence."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    Engine,
    case,
    cast,
    delete,
    func,
    literal,
    select,
    true,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from digest.models import Channel, ChannelRef, FeedbackVote, Subscription, SubscriptionKind
from digest.store.deliveries import _aware
from digest.store.schema import ChannelRow, FeedbackRow, SubscriptionRow, look_mark
from digest.zones import usable_timezone

#: A Discord snowflake's low 22 bits are worker, process and increment; the rest is the time
#: Discord shards guilds by.
SNOWFLAKE_SHIFT = 22


@dataclass(frozen=True)
class Shards:
    """One replica's part of a sharded platform's channels: shard ``ids`` out of ``count``."""

    ids: frozenset[int]
    count: int
    platform: str = "discord"

    def where(self) -> ColumnElement[bool]:
        """SQL for both engines: the channels that are this replica's. Discord's rule: a server
        channel is on shard (guild_id >> 22) % count, a DM (``@user``) on shard 0; other
        platforms' channels are everyone's."""
        server = ~ChannelRow.channel_id.startswith("@", autoescape=True)
        shard = case(
            (
                server,
                # // is integer division on both engines (/ would be NUMERIC on PostgreSQL)
                cast(ChannelRow.workspace, BigInteger)
                // literal(1 << SNOWFLAKE_SHIFT, BigInteger)
                % self.count,
            ),
            else_=0,
        )
        return (ChannelRow.platform != self.platform) | shard.in_(sorted(self.ids))


def _mine(shards: Shards | None) -> ColumnElement[bool]:
    return shards.where() if shards is not None else true()


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
}
#: Settings that move a channel's due times (or stop and restart them): changing one marks the
#: channel for the scheduler's next look (see schema.LOOK_NOW).
SCHEDULE = {"timezone", "digest_time", "weekdays", "paused"}


def to_channel(row: ChannelRow) -> Channel:
    """Domain object from a row."""
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


def _vote(session: Session, channel_id: int, user: str, paper_id: str) -> FeedbackRow | None:
    """A member's current vote on a paper in a channel."""
    stmt = select(FeedbackRow).where(
        FeedbackRow.channel_id == channel_id,
        FeedbackRow.user == user,
        FeedbackRow.paper_id == paper_id,
    )
    return session.scalars(stmt).first()


def _insert(conn: Connection):  # noqa: ANN202 - a dialect's insert construct
    """The dialect's INSERT, which knows ON CONFLICT (both backends we support do)."""
    return postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert


class ChannelRepo:
    """Reads and writes channels, their subscriptions and their members' feedback."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

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
                    created_at=datetime.now(UTC),
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
            )  # fmt: skip
            .values(paused=True, paused_reason=reason, next_due_at=look_mark())
        )
        with Session(self.engine) as session:
            n = session.execute(stmt).rowcount
            session.commit()
        return n

    def with_channel_id(self, platform: str, channel_id: str) -> list[Channel]:
        """Every channel of a platform with this channel id, whatever its workspace; oldest first."""
        stmt = (
            select(ChannelRow)
            .where(ChannelRow.platform == platform, ChannelRow.channel_id == channel_id)
            .order_by(ChannelRow.id)
        )
        with Session(self.engine) as session:
            return [to_channel(r) for r in session.scalars(stmt)]

    def all(self) -> list[Channel]:
        """Every channel, in creation order."""
        with Session(self.engine) as session:
            return [to_channel(r) for r in session.scalars(select(ChannelRow).order_by("id"))]

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
                    created_at=datetime.now(UTC),
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

    def set_feedback(self, channel_id: int, user: str, paper_id: str, value: int) -> int:
        """Record a vote; the same vote again toggles it off. Returns the vote now in force (0: none).

        Each step is one conditional statement, never a read then a write: two presses at once
        (a double-click, two processes) are applied one after the other, each answer saying what
        that press did, instead of the second one failing on the unique key.
        """
        mine = (
            FeedbackRow.channel_id == channel_id,
            FeedbackRow.user == user,
            FeedbackRow.paper_id == paper_id,
        )
        now = datetime.now(UTC)
        row = {"channel_id": channel_id, "user": user, "paper_id": paper_id, "value": value}
        for _ in range(5):  # a round only repeats when another press changed the row in between
            with self.engine.begin() as conn:
                same = delete(FeedbackRow).where(*mine, FeedbackRow.value == value)
                if conn.execute(same).rowcount:
                    self.look(conn, channel_id)
                    return 0
                other = update(FeedbackRow).where(*mine, FeedbackRow.value != value)
                if conn.execute(other.values(value=value, created_at=now)).rowcount:
                    self.look(conn, channel_id)
                    return value
                add = _insert(conn)(FeedbackRow).values(**row, created_at=now)
                add = add.on_conflict_do_nothing(index_elements=["channel_id", "user", "paper_id"])
                # RETURNING, not rowcount: psycopg reports -1 for an INSERT that may return rows
                if conn.execute(add.returning(FeedbackRow.id)).first() is not None:
                    self.look(conn, channel_id)
                    return value
        raise RuntimeError("vote kept changing under us")  # five concurrent presses in a row

    def put_feedback(self, channel_id: int, user: str, paper_id: str, value: int) -> None:
        """Set a vote idempotently (0 clears it): safe when a platform retries the same event."""
        with Session(self.engine) as session:
            row = _vote(session, channel_id, user, paper_id)
            if value == 0 and row is not None:
                session.delete(row)
            elif value and row is not None:
                row.value = value
            elif value:
                session.add(FeedbackRow(channel_id=channel_id, user=user, paper_id=paper_id, value=value,
                                        created_at=datetime.now(UTC)))  # fmt: skip
            try:
                self.look(session, channel_id)  # flushes the vote first
                session.commit()
            except IntegrityError:  # the same event processed concurrently: already recorded
                session.rollback()

    def feedback(self, channel_id: int) -> list[FeedbackVote]:
        """Every vote cast in a channel."""
        stmt = select(FeedbackRow).where(FeedbackRow.channel_id == channel_id)
        with Session(self.engine) as session:
            return [
                FeedbackVote(r.channel_id, r.user, r.paper_id, r.value)
                for r in session.scalars(stmt)
            ]

    def feedback_totals(self, channel_id: int) -> dict[str, int]:
        """Net vote per paper in a channel (sum of +1/-1)."""
        stmt = (
            select(FeedbackRow.paper_id, func.sum(FeedbackRow.value))
            .where(FeedbackRow.channel_id == channel_id)
            .group_by(FeedbackRow.paper_id)
        )
        with Session(self.engine) as session:
            return {pid: int(total) for pid, total in session.execute(stmt)}
