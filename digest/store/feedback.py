"""Votes persistence (ChannelRepo's part): set idempotently or as a toggle, merged between
digests, and counted across a workspace's channels for `top` and digest marks."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from sqlalchemy import Connection, Engine, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from digest.clock import Clock
from digest.models import PERSONAL_MARK, FeedbackVote, LikedIn
from digest.store.schema import ChannelRow, FeedbackRow


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
    # Imported here: the PostgreSQL dialect package loads all its drivers' modules, which a
    # SQLite deployment (and every command that only reads) never needs.
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert


class FeedbackQueries:
    """ChannelRepo's votes: cast, withdrawn, merged, counted (it provides ``engine`` and ``look``)."""

    engine: Engine
    clock: Clock  # stamps votes: the composition root's clock

    def look(self, session: Session | Connection, channel_id: int) -> None:  # ChannelRepo's
        raise NotImplementedError

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
        now = self.clock()
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
                session.add(
                    FeedbackRow(
                        channel_id=channel_id,
                        user=user,
                        paper_id=paper_id,
                        value=value,
                        created_at=self.clock(),
                    )
                )
            try:
                self.look(session, channel_id)  # flushes the vote first
                session.commit()
            except IntegrityError:  # the same event processed concurrently: already recorded
                session.rollback()

    def thumbs_up(
        self, channel_ids: list[int], since: datetime | None = None
    ) -> list[tuple[str, str, int]]:
        """(paper id, user, channel id) of every 👍 in these channels (cast since ``since``)."""
        stmt = select(FeedbackRow.paper_id, FeedbackRow.user, FeedbackRow.channel_id).where(
            FeedbackRow.channel_id.in_(channel_ids), FeedbackRow.value > 0
        )
        if since is not None:
            stmt = stmt.where(FeedbackRow.created_at >= since.astimezone(UTC))
        with Session(self.engine) as session:
            return [(p, u, c) for p, u, c in session.execute(stmt)]

    def liked_in(self, paper_ids: Iterable[str]) -> list[LikedIn]:
        """Who shares a 👍 of each of ``paper_ids``: (paper id, channel row id, platform,
        workspace, channel name or id) for every shared (option share-votes), public channel
        that 👍'd it; private, unknown and personal ones never count. One query, whatever the number of digests asking."""
        ids = list(dict.fromkeys(paper_ids))
        if not ids:
            return []
        stmt = (
            select(
                FeedbackRow.paper_id,
                ChannelRow.id,
                ChannelRow.platform,
                ChannelRow.workspace,
                ChannelRow.name,
                ChannelRow.channel_id,
            )
            .join(ChannelRow, ChannelRow.id == FeedbackRow.channel_id)
            .where(
                ChannelRow.share_votes.is_(True),
                # a mark names its channel to everyone reading the digest: only a channel its
                # platform said everyone there can see (unknown counts as private)
                ChannelRow.public.is_(True),
                ~ChannelRow.channel_id.startswith(PERSONAL_MARK, autoescape=True),
                FeedbackRow.value > 0,
                FeedbackRow.paper_id.in_(ids),
            )
            .distinct()
            .order_by(FeedbackRow.paper_id, ChannelRow.channel_id)
        )
        with Session(self.engine) as session:
            return [
                LikedIn(paper, row_id, platform, workspace or "", name or channel_id)
                for paper, row_id, platform, workspace, name, channel_id in session.execute(stmt)
            ]

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
