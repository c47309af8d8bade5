"""Migration 0014 (channels.share_votes) keeps every channel's votes and deliveries, on SQLite
and PostgreSQL, up and down.

Break that turns this red (seen): the column added in batch mode, which on SQLite copies the
channels table and drops the old one, and the drop's ON DELETE CASCADE deletes every vote."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from digest.store.database import alembic_config, make_engine, upgrade
from tests.support.migration_rows import NOW, channel, seed, votes


def test_share_votes_arrives_on_and_nothing_is_lost(db_url):
    engine = make_engine(db_url)
    upgrade(engine, "0010")
    seed(engine, [channel(1)])
    upgrade(engine, "0014")
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT share_votes FROM channels")).scalar() in (True, 1)
    assert votes(engine) == 1
    command.downgrade(alembic_config(engine), "0010")
    assert votes(engine) == 1
    engine.dispose()


def test_upgrading_from_0003_keeps_votes_and_subscriptions(tmp_path):
    """0004 adds `backlog` in batch mode, which on SQLite copies the channels table and drops
    the old one. Break that turns this red (seen): env.py running migrations with SQLite's
    foreign keys on (the drop cascades: a database upgraded from 0003 lost every vote and
    subscription)."""
    engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
    upgrade(engine, "0003")
    meta = sa.MetaData()
    t = {
        n: sa.Table(n, meta, autoload_with=engine)
        for n in ("papers", "channels", "feedback", "subscriptions")
    }
    with engine.begin() as conn:
        conn.execute(
            t["papers"].insert(),
            [
                dict(
                    id="p1",
                    source="jsonl",
                    title="T",
                    title_derived=False,
                    title_key="t",
                    abstract_raw="A",
                    abstract="A",
                    authors=[],
                    keywords=[],
                    ingested_at=NOW,
                    content_hash="h",
                )
            ],
        )
        conn.execute(
            t["channels"].insert(),
            [
                dict(
                    id=1,
                    platform="console",
                    workspace="",
                    channel_id="lab",
                    name="lab",
                    timezone="UTC",
                    digest_time="09:00",
                    weekdays="mon",
                    digest_size=5,
                    threshold=0.3,
                    paused=False,
                    quiet_when_empty=False,
                    threaded=False,
                    admin_only=False,
                    created_at=NOW,
                )
            ],
        )
        conn.execute(
            t["feedback"].insert(),
            [dict(id=1, channel_id=1, user="ann", paper_id="p1", value=1, created_at=NOW)],
        )
        conn.execute(
            t["subscriptions"].insert(),
            [dict(id=1, channel_id=1, kind="topic", text="x", created_at=NOW)],
        )
    upgrade(engine)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM feedback")).scalar() == 1
        assert conn.execute(sa.text("SELECT count(*) FROM subscriptions")).scalar() == 1
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1  # back on for the app
    engine.dispose()
