"""The reading group's rows: each channel's meeting, nominations, weekly polls and their votes.

A poll is made once per channel and meeting (unique key), its candidates fixed then; a vote is
one row per (poll, voter), written by one upsert, so a changed vote moves and two clicks at once
never count twice; the decision is written once (a conditional UPDATE), so the announcement,
the reminder and the recap all read the same pick, whoever computed it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime

from sqlalchemy import Connection, Engine, select, update
from sqlalchemy.orm import Session

from digest.clock import Clock
from digest.store.deliveries import _aware
from digest.store.schema import (
    ChannelRow,
    ReadingGroupRow,
    ReadingNominationRow,
    ReadingPollRow,
    ReadingVoteRow,
)


@dataclass(frozen=True)
class Group:
    """A channel's reading group as stored."""

    channel_id: int
    weekday: int
    at: str
    timezone: str
    active: bool


@dataclass(frozen=True)
class Nomination:
    """A nominated paper, by whom and when (the database's order decides ties)."""

    paper_id: str
    user: str
    nominated_at: datetime


@dataclass(frozen=True)
class Poll:
    """One week's poll."""

    id: int
    channel_id: int
    meeting_date: date
    meeting_at: datetime
    closes_at: datetime
    candidates: tuple[str, ...]
    outcome: str | None = None
    pick: str | None = None
    tied: tuple[str, ...] = ()

    @property
    def decided(self) -> bool:
        """Closed and tallied: its outcome is stored."""
        return self.outcome is not None


def _insert(conn: Connection):  # noqa: ANN202 - a dialect's insert construct
    """The dialect's INSERT with ON CONFLICT (both backends have it)."""
    # Imported here: the PostgreSQL dialect package loads its drivers' modules, which a SQLite
    # deployment never needs.
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert


def _utc(dt: datetime | None) -> datetime:
    """A stored, required time as an aware UTC datetime (SQLite hands back naive ones)."""
    out = _aware(dt)
    assert out is not None
    return out


def _poll(r: ReadingPollRow) -> Poll:
    return Poll(
        r.id,
        r.channel_id,
        r.meeting_date,
        _utc(r.meeting_at),
        _utc(r.closes_at),
        tuple(r.candidates or ()),
        r.outcome,
        r.pick,
        tuple(r.tied or ()),
    )


class ReadingRepo:
    """Reading groups, nominations, polls and votes."""

    def __init__(self, engine: Engine, clock: Clock) -> None:
        self.engine = engine
        self.clock = clock

    def set_group(
        self, channel_id: int, weekday: int, at: str, timezone: str, user: str | None
    ) -> None:
        """Turn the channel's reading group on at this weekday and time (replacing any)."""
        values = {
            "channel_id": channel_id,
            "weekday": weekday,
            "at": at,
            "timezone": timezone,
            "active": True,
            "set_by": user,
            "updated_at": self.clock(),
        }
        with self.engine.begin() as conn:
            stmt = _insert(conn)(ReadingGroupRow).values(**values)
            keep = {k: v for k, v in values.items() if k != "channel_id"}
            conn.execute(stmt.on_conflict_do_update(index_elements=["channel_id"], set_=keep))

    def switch_off(self, channel_id: int) -> bool:
        """Turn it off (its settings kept); False when it was not on."""
        stmt = (
            update(ReadingGroupRow)
            .where(ReadingGroupRow.channel_id == channel_id, ReadingGroupRow.active.is_(True))
            .values(active=False, updated_at=self.clock())
        )
        with self.engine.begin() as conn:
            return conn.execute(stmt).rowcount == 1

    def group(self, channel_id: int) -> Group | None:
        """The channel's reading group, on or off; None if never set."""
        with Session(self.engine) as s:
            r = s.get(ReadingGroupRow, channel_id)
            return Group(r.channel_id, r.weekday, r.at, r.timezone, r.active) if r else None

    def active(self, platforms: Iterable[str] | None = None) -> list[Group]:
        """Every reading group that is on (of channels on ``platforms``)."""
        stmt = select(ReadingGroupRow).where(ReadingGroupRow.active.is_(True))
        if platforms is not None:
            stmt = stmt.join(ChannelRow, ChannelRow.id == ReadingGroupRow.channel_id).where(
                ChannelRow.platform.in_(sorted(platforms))
            )
        with Session(self.engine) as s:
            return [
                Group(r.channel_id, r.weekday, r.at, r.timezone, r.active)
                for r in s.scalars(stmt.order_by(ReadingGroupRow.channel_id))
            ]

    def nominate(self, channel_id: int, paper_id: str, user: str) -> bool:
        """Nominate a paper; False when it already was (by anyone), read or not."""
        row = {
            "channel_id": channel_id,
            "paper_id": paper_id,
            "user": user,
            "nominated_at": self.clock(),
        }
        with self.engine.begin() as conn:
            stmt = _insert(conn)(ReadingNominationRow).values(**row)
            stmt = stmt.on_conflict_do_nothing(index_elements=["channel_id", "paper_id"])
            return conn.execute(stmt.returning(ReadingNominationRow.id)).first() is not None

    def nominations(self, channel_id: int) -> list[Nomination]:
        """Papers nominated and not read yet, earliest first."""
        stmt = (
            select(ReadingNominationRow)
            .where(
                ReadingNominationRow.channel_id == channel_id,
                ReadingNominationRow.read_on.is_(None),
            )
            .order_by(ReadingNominationRow.nominated_at, ReadingNominationRow.id)
        )
        with Session(self.engine) as s:
            return [Nomination(r.paper_id, r.user, _utc(r.nominated_at)) for r in s.scalars(stmt)]

    def open_poll(
        self,
        channel_id: int,
        meeting_date: date,
        meeting_at: datetime,
        closes_at: datetime,
        candidates: list[str],
    ) -> Poll:
        """The week's poll, made once: a second caller gets the first one's candidates."""
        row = {
            "channel_id": channel_id,
            "meeting_date": meeting_date,
            "meeting_at": meeting_at.astimezone(UTC),  # SQLite keeps no zone: UTC throughout
            "closes_at": closes_at.astimezone(UTC),
            "candidates": candidates,
            "opened_at": self.clock(),
        }
        with self.engine.begin() as conn:
            stmt = _insert(conn)(ReadingPollRow).values(**row)
            conn.execute(stmt.on_conflict_do_nothing(index_elements=["channel_id", "meeting_date"]))
        found = self.poll_for(channel_id, meeting_date)
        assert found is not None
        return found

    def poll(self, poll_id: int) -> Poll | None:
        """A poll by id."""
        with Session(self.engine) as s:
            r = s.get(ReadingPollRow, poll_id)
            return _poll(r) if r else None

    def poll_for(self, channel_id: int, meeting_date: date) -> Poll | None:
        """The channel's poll for a meeting, if it was opened."""
        stmt = select(ReadingPollRow).where(
            ReadingPollRow.channel_id == channel_id, ReadingPollRow.meeting_date == meeting_date
        )
        with Session(self.engine) as s:
            r = s.scalars(stmt).first()
            return _poll(r) if r else None

    def polls(self, channel_id: int) -> list[Poll]:
        """Every poll of a channel, newest meeting first."""
        stmt = (
            select(ReadingPollRow)
            .where(ReadingPollRow.channel_id == channel_id)
            .order_by(ReadingPollRow.meeting_date.desc())
        )
        with Session(self.engine) as s:
            return [_poll(r) for r in s.scalars(stmt)]

    def picks(self, channel_id: int) -> set[str]:
        """Papers the group already picked (never candidates again)."""
        stmt = select(ReadingPollRow.pick).where(
            ReadingPollRow.channel_id == channel_id, ReadingPollRow.pick.is_not(None)
        )
        with Session(self.engine) as s:
            return {p for p in s.scalars(stmt) if p}

    def vote(self, poll_id: int, voter: str, paper_id: str) -> None:
        """One vote per person and poll: a new one is added, a changed one moved (one upsert:
        concurrent clicks by one person leave one row, the last write's choice)."""
        row = {"poll_id": poll_id, "voter": voter, "paper_id": paper_id, "voted_at": self.clock()}
        with self.engine.begin() as conn:
            stmt = _insert(conn)(ReadingVoteRow).values(**row)
            conn.execute(
                stmt.on_conflict_do_update(
                    index_elements=["poll_id", "voter"],
                    set_={"paper_id": paper_id, "voted_at": row["voted_at"]},
                )
            )

    def votes(self, poll_id: int) -> list[tuple[str, str]]:
        """(voter, paper id) of every vote in a poll, in the order first cast."""
        stmt = (
            select(ReadingVoteRow.voter, ReadingVoteRow.paper_id)
            .where(ReadingVoteRow.poll_id == poll_id)
            .order_by(ReadingVoteRow.id)
        )
        with Session(self.engine) as s:
            return [(v, p) for v, p in s.execute(stmt)]

    def decide(self, poll_id: int, outcome: str, pick: str | None, tied: list[str]) -> Poll:
        """Record the decision once (the first writer's stands) and mark the pick's nomination
        read; the poll as decided."""
        with self.engine.begin() as conn:
            done = conn.execute(
                update(ReadingPollRow)
                .where(ReadingPollRow.id == poll_id, ReadingPollRow.decided_at.is_(None))
                .values(decided_at=self.clock(), outcome=outcome, pick=pick, tied=tied)
            ).rowcount
            if done and pick is not None:
                poll = conn.execute(
                    select(ReadingPollRow.channel_id, ReadingPollRow.meeting_date).where(
                        ReadingPollRow.id == poll_id
                    )
                ).one()
                conn.execute(
                    update(ReadingNominationRow)
                    .where(
                        ReadingNominationRow.channel_id == poll.channel_id,
                        ReadingNominationRow.paper_id == pick,
                    )
                    .values(read_on=poll.meeting_date)
                )
        found = self.poll(poll_id)
        assert found is not None
        return found
