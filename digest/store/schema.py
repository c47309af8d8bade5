"""Database tables as SQLAlchemy 2.x typed mappings; Alembic migrations mirror these."""

# No `from __future__ import annotations` here: the mapped types are read as written instead of
# evaluated from strings: a sixth less to map these tables, which every command does.

import secrets
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Declarative base with a naming convention so migrations name constraints the same everywhere."""

    metadata = MetaData(naming_convention=NAMING)


class PaperRow(Base):
    """One paper, from whichever source(s) described it."""

    __tablename__ = "papers"

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    source: Mapped[str] = mapped_column(String(32))
    title: Mapped[str] = mapped_column(Text)
    title_derived: Mapped[bool] = mapped_column(Boolean, default=False)
    title_key: Mapped[str] = mapped_column(String(512), index=True)
    abstract_raw: Mapped[str] = mapped_column(Text)
    abstract: Mapped[str] = mapped_column(Text)
    authors: Mapped[list[str]] = mapped_column(JSON, default=list)
    keywords: Mapped[list[str]] = mapped_column(JSON, default=list)
    venue: Mapped[str | None] = mapped_column(String(200))
    year: Mapped[int | None] = mapped_column(Integer, index=True)
    pdf_url: Mapped[str | None] = mapped_column(Text)
    abs_url: Mapped[str | None] = mapped_column(Text)
    forum_url: Mapped[str | None] = mapped_column(Text)
    code_url: Mapped[str | None] = mapped_column(Text)
    arxiv_id: Mapped[str | None] = mapped_column(String(32), index=True)
    arxiv_version: Mapped[int | None] = mapped_column(Integer)  # v2 replaces v1's text, not back
    openreview_id: Mapped[str | None] = mapped_column(String(64), index=True)
    published: Mapped[date | None] = mapped_column(Date)
    ingested_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    content_hash: Mapped[str] = mapped_column(String(64), index=True)
    # The BibTeX key issued when the paper was first stored; kept when its title or authors change.
    cite_key: Mapped[str | None] = mapped_column(String(200), index=True)
    # Ingest sequence, assigned under the `counters` row lock so it follows commit order.
    seq: Mapped[int | None] = mapped_column(BigInteger, index=True)


class CounterRow(Base):
    """A named counter; updating its row serialises whoever draws from it until they commit."""

    __tablename__ = "counters"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[int] = mapped_column(BigInteger, default=0)


#: A channel's ``next_due_at`` when something changed that may make a digest owed sooner (a new
#: channel, a schedule, a resume, a subscription, a vote): any due time is later, so the next
#: scheduler tick looks at it. Marks differ by a random microsecond offset (see ``look_mark``).
LOOK_NOW = datetime(1970, 1, 1, tzinfo=UTC)


def look_mark() -> datetime:
    """A fresh "look at this channel" mark: distinct from the last one, so a tick that read the
    old mark cannot overwrite a change made while it ran (its compare-and-set misses)."""
    return LOOK_NOW + timedelta(microseconds=secrets.randbelow(10**12))


class ChannelRow(Base):
    """A channel (or DM) that receives digests, with its settings."""

    __tablename__ = "channels"
    # (paused, next_due_at): the scheduler reads only the active channels now due, in due order.
    __table_args__ = (
        UniqueConstraint("platform", "workspace", "channel_id"),
        Index("ix_channels_due", "paused", "next_due_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    platform: Mapped[str] = mapped_column(String(16))
    workspace: Mapped[str] = mapped_column(String(64), default="")
    channel_id: Mapped[str] = mapped_column(String(128))
    name: Mapped[str] = mapped_column(String(200), default="")
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    digest_time: Mapped[str] = mapped_column(String(5), default="09:00")
    weekdays: Mapped[str] = mapped_column(String(32), default="mon,tue,wed,thu,fri")
    digest_size: Mapped[int] = mapped_column(Integer, default=5)
    threshold: Mapped[float] = mapped_column(Float, default=0.3)
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    paused_reason: Mapped[str | None] = mapped_column(Text)
    quiet_when_empty: Mapped[bool] = mapped_column(Boolean, default=False)
    threaded: Mapped[bool] = mapped_column(Boolean, default=False)
    backlog: Mapped[bool] = mapped_column(Boolean, default=True)  # fill digests from older papers
    admin_only: Mapped[bool] = mapped_column(Boolean, default=False)
    # The weekly picture: None follows the default (on with two interests or more), else as set.
    weekly: Mapped[bool | None] = mapped_column(Boolean)
    # 👍 here count in the workspace's `top` and in other channels' digest marks (migration 0014)
    share_votes: Mapped[bool] = mapped_column(Boolean, default=True)
    # Whether everyone in the workspace/server can see the channel, as its platform last said
    # (migration 0016); None: never said, and treated as private (no digest mark names it).
    public: Mapped[bool | None] = mapped_column(Boolean)
    owner_user: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # When the scheduler next has to look at this channel (UTC); see LOOK_NOW.
    next_due_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=look_mark)


class SubscriptionRow(Base):
    """One topic / author / exclude / like line of a channel's profile."""

    __tablename__ = "subscriptions"
    __table_args__ = (UniqueConstraint("channel_id", "kind", "text"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    text: Mapped[str] = mapped_column(String(500))
    created_by: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class DeliveryRow(Base):
    """A planned delivery to a channel: a day's digest, or a week's picture (``kind``); the
    unique key is what makes posting exactly-once."""

    __tablename__ = "deliveries"
    __table_args__ = (UniqueConstraint("channel_id", "kind", "digest_date"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    # A digest's day, or the Monday (channel's calendar) a weekly picture is for.
    digest_date: Mapped[date] = mapped_column(Date)
    kind: Mapped[str] = mapped_column(String(16), default="digest", server_default="digest")
    status: Mapped[str] = mapped_column(String(16), default="claimed")
    claimed_by: Mapped[str] = mapped_column(String(128), default="")
    claimed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    posted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    message_ref: Mapped[str | None] = mapped_column(Text)
    near_misses: Mapped[int] = mapped_column(Integer, default=0)
    # Lease and fencing token: times come from the database clock, never a worker's.
    fence: Mapped[int] = mapped_column(Integer, default=1)
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    give_up_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    retry_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    upto_seq: Mapped[int | None] = mapped_column(BigInteger)  # papers up to here were considered
    # The digest as planned (JSON), so a retry sends exactly the planned messages.
    rendered: Mapped[str | None] = mapped_column(Text)


class DeliveryMessageRow(Base):
    """One planned platform message of a digest, confirmed on its own (the message ledger)."""

    __tablename__ = "delivery_messages"
    __table_args__ = (UniqueConstraint("delivery_id", "position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    delivery_id: Mapped[int] = mapped_column(ForeignKey("deliveries.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    paper_ids: Mapped[list[str]] = mapped_column(JSON, default=list)
    status: Mapped[str] = mapped_column(String(16), default="planned")
    message_ref: Mapped[str | None] = mapped_column(Text)


class DeliveryItemRow(Base):
    """A paper included in a delivered digest; a channel never gets the same paper twice."""

    __tablename__ = "delivery_items"
    __table_args__ = (
        UniqueConstraint("channel_id", "paper_id"),
        # a message's papers, found without reading every item ever sent (migration 0015)
        Index("ix_delivery_items_delivery", "delivery_id", "position"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    delivery_id: Mapped[int] = mapped_column(ForeignKey("deliveries.id", ondelete="CASCADE"))
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    paper_id: Mapped[str] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    rank: Mapped[int] = mapped_column(Integer)
    score: Mapped[float] = mapped_column(Float)
    why: Mapped[str] = mapped_column(Text, default="")
    message_ref: Mapped[str | None] = mapped_column(Text)
    position: Mapped[int | None] = mapped_column(Integer)  # the ledger message carrying it
    # The opted-in members this pick mentions (a JSON list of user ids), fixed when the digest
    # was composed, so a retry or a take-over posts the same mentions; None: nobody.
    mentions: Mapped[str | None] = mapped_column(Text)


class MentionOptInRow(Base):
    """A member who asked to be mentioned on this channel's picks that fit their own digest."""

    __tablename__ = "mention_optins"
    __table_args__ = (UniqueConstraint("channel_id", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(String(128))
    # Their personal digest (its profile and threshold decide what fits them); removed with it.
    personal_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class FeedbackRow(Base):
    """A member's +1/-1 on a paper in a channel; one vote per user and paper."""

    __tablename__ = "feedback"
    __table_args__ = (UniqueConstraint("channel_id", "user", "paper_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    user: Mapped[str] = mapped_column(String(128))
    paper_id: Mapped[str] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    value: Mapped[int] = mapped_column(SmallInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: When a button or command last cast it, by the database's clock (None: before 0018): the
    #: same press again within DOUBLE_CLICK_S is one click, not a withdrawal.
    pressed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class KeyValueRow(Base):
    """Small pieces of operational state (e.g. command-tree hash, last ingest time)."""

    __tablename__ = "kv"

    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class PaperTldrRow(Base):
    """A paper's abstractive TL;DR, with the model that wrote it and the text it was written from:
    another model or a new abstract makes it stale (rewritten in the background, docs/tldr.md)."""

    __tablename__ = "paper_tldrs"

    paper_id: Mapped[str] = mapped_column(
        ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True
    )
    model: Mapped[str] = mapped_column(String(200))
    content_hash: Mapped[str] = mapped_column(String(64))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class LeaseRow(Base):
    """A named lease in the database's clock: a running replica's presence (``replica:<worker>``)
    or a platform shard's ownership (``discord:shard:<n>``). ``owner`` holds it until ``until``;
    ``fence`` grows at each take-over, so a former owner can tell it lost it."""

    __tablename__ = "leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(128))
    until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    fence: Mapped[int] = mapped_column(BigInteger, default=0)


class PaperEmbeddingRow(Base):
    """A paper's sentence embedding under one model, computed once by whichever process claimed
    it and loaded by every other: float16, the text hash it was computed from, and a sequence
    number drawn in commit order so a reader loads only what was stored since it last looked."""

    __tablename__ = "paper_embeddings"

    paper_id: Mapped[str] = mapped_column(
        ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True
    )
    model: Mapped[str] = mapped_column(String(64), primary_key=True)
    text_hash: Mapped[str] = mapped_column(String(16))
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    seq: Mapped[int] = mapped_column(BigInteger, index=True)
    created_by: Mapped[str] = mapped_column(String(128), default="")


class EmbeddingClaimRow(Base):
    """A paper being embedded: held by one worker until its lease (the database clock) lapses."""

    __tablename__ = "embedding_claims"

    paper_id: Mapped[str] = mapped_column(
        ForeignKey("papers.id", ondelete="CASCADE"), primary_key=True
    )
    model: Mapped[str] = mapped_column(String(64), primary_key=True)
    claimed_by: Mapped[str] = mapped_column(String(128))
    lease_until: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class IndexPartRow(Base):
    """The fitted ranking index, shared through the database: a base (a fit, or a merge of a base
    and its segments) or a segment (papers appended to a base's chain), written once by the
    process that claimed the work and loaded by every other."""

    __tablename__ = "index_parts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    format: Mapped[str] = mapped_column(String(32), index=True)  # what reads the blob
    kind: Mapped[str] = mapped_column(String(8))  # 'base' or 'segment'
    base_id: Mapped[int | None] = mapped_column(Integer, index=True)  # a segment's base
    merged_from: Mapped[int | None] = mapped_column(Integer)  # a merged base: the base it folds
    seq_from: Mapped[int] = mapped_column(BigInteger)  # ingest sequence covered: (from, to]
    seq_to: Mapped[int] = mapped_column(BigInteger)
    papers: Mapped[int] = mapped_column(Integer)  # papers in the index once this part is applied
    text_epoch: Mapped[int] = mapped_column(BigInteger, default=0)  # a base: texts it has seen
    size: Mapped[int] = mapped_column(BigInteger)
    blob: Mapped[bytes] = mapped_column(LargeBinary)
    created_by: Mapped[str] = mapped_column(String(128), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class IndexClaimRow(Base):
    """A piece of index work (a fit, a segment, a merge) held by one worker until it is done or
    its lease (the database clock) lapses."""

    __tablename__ = "index_claims"

    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    claimed_by: Mapped[str] = mapped_column(String(128))
    lease_until: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    done: Mapped[bool] = mapped_column(Boolean, default=False)


class ZoteroConnectionRow(Base):
    """A person's Zotero library: its id, their API key encrypted at rest, and how far sync got."""

    __tablename__ = "zotero_connections"
    __table_args__ = (UniqueConstraint("platform", "workspace", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    platform: Mapped[str] = mapped_column(String(16))
    workspace: Mapped[str] = mapped_column(String(64), default="")
    user_id: Mapped[str] = mapped_column(String(128))
    # The personal digest its library feeds (a DM channel id, '@user' on the console).
    channel_id: Mapped[str] = mapped_column(String(128))
    library_type: Mapped[str] = mapped_column(String(8))  # user | group
    library_id: Mapped[str] = mapped_column(String(32))
    key_encrypted: Mapped[str] = mapped_column(Text)  # Fernet token; never the key itself
    collection_key: Mapped[str | None] = mapped_column(String(16))  # the `digestbot` collection
    version: Mapped[int] = mapped_column(BigInteger, default=0)  # Last-Modified-Version synced
    synced_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Zotero asked us to wait (429 Retry-After, Backoff): nothing is sent before this time.
    backoff_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ZoteroItemRow(Base):
    """One Zotero item as sync last saw it, the paper it became, and whether sync added the like."""

    __tablename__ = "zotero_items"
    __table_args__ = (UniqueConstraint("connection_id", "item_key", "kind"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    connection_id: Mapped[int] = mapped_column(
        ForeignKey("zotero_connections.id", ondelete="CASCADE")
    )
    item_key: Mapped[str] = mapped_column(String(16))
    # synced: read from the library (feeds a like); saved: created by `/papers save`
    kind: Mapped[str] = mapped_column(String(8))
    paper_id: Mapped[str | None] = mapped_column(String(128))
    added_like: Mapped[bool] = mapped_column(Boolean, default=False)


class ReadingGroupRow(Base):
    """A channel's reading group: the weekly meeting (weekday, local time, zone), on or off."""

    __tablename__ = "reading_groups"

    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    weekday: Mapped[int] = mapped_column(SmallInteger)  # 0 Monday … 6 Sunday
    at: Mapped[str] = mapped_column(String(5))  # 'HH:MM' in ``timezone``
    timezone: Mapped[str] = mapped_column(String(64))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    set_by: Mapped[str | None] = mapped_column(String(128))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ReadingNominationRow(Base):
    """A paper a member nominated for the channel's reading group; ``read_on`` once picked."""

    __tablename__ = "reading_nominations"
    __table_args__ = (UniqueConstraint("channel_id", "paper_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    paper_id: Mapped[str] = mapped_column(String(128))
    user: Mapped[str] = mapped_column(String(128))
    nominated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    read_on: Mapped[date | None] = mapped_column(Date)


class ReadingPollRow(Base):
    """One week's poll: its candidates (in the order shown), when it closes, and, once decided,
    the pick and how it was reached (the announcement, reminder and recap all read this)."""

    __tablename__ = "reading_polls"
    __table_args__ = (UniqueConstraint("channel_id", "meeting_date"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    meeting_date: Mapped[date] = mapped_column(Date)  # the meeting's day, in its zone
    meeting_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    closes_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    candidates: Mapped[list[str]] = mapped_column(JSON, default=list)
    opened_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    outcome: Mapped[str | None] = mapped_column(String(16))  # picked | tie | no-votes | none
    pick: Mapped[str | None] = mapped_column(String(128))
    tied: Mapped[list[str] | None] = mapped_column(JSON)


class ReadingVoteRow(Base):
    """One person's vote in a poll: unique per (poll, voter), so a changed vote moves it and
    concurrent clicks never count twice."""

    __tablename__ = "reading_votes"
    __table_args__ = (UniqueConstraint("poll_id", "voter"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    poll_id: Mapped[int] = mapped_column(ForeignKey("reading_polls.id", ondelete="CASCADE"))
    voter: Mapped[str] = mapped_column(String(128))
    paper_id: Mapped[str] = mapped_column(String(128))
    voted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
