"""Migration 0016 (channels.public) keeps every channel's votes, on SQLite and PostgreSQL, up
and down, and leaves every existing chat channel's visibility unknown (so counted as private
until its platform says); the console's shared channels are public, as new ones are made.

Breaks that turn this red (seen): the column given a server default of true (an old private
channel would be named in other digests at once); no update of the console's channels (their
👍 vanished from other channels' marks after the upgrade)."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command

from digest.store.database import alembic_config, make_engine, upgrade

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_public_arrives_unknown_and_nothing_is_lost(db_url):
    engine = make_engine(db_url)
    upgrade(engine, "0015")
    meta = sa.MetaData()
    t = {n: sa.Table(n, meta, autoload_with=engine) for n in ("papers", "channels", "feedback")}
    with engine.begin() as conn:
        conn.execute(t["papers"].insert(), [dict(
            id="p1", source="jsonl", title="T", title_derived=False, title_key="t", abstract_raw="A",
            abstract="A", authors=[], keywords=[], ingested_at=NOW, content_hash="h", seq=1)])  # fmt: skip
        conn.execute(t["channels"].insert(), [dict(
            id=i, platform=platform, workspace=ws, channel_id=cid, name="lab", timezone="UTC",
            digest_time="09:00", weekdays="mon", digest_size=5, threshold=0.3, paused=False,
            quiet_when_empty=False, threaded=False, backlog=True, admin_only=False,
            share_votes=True, created_at=NOW)
            for i, platform, ws, cid in ((1, "slack", "T1", "C1"), (2, "console", "", "lab"),
                                         (3, "console", "", "@ann"))])  # fmt: skip
        conn.execute(t["feedback"].insert(), [dict(
            id=1, channel_id=1, user="ann", paper_id="p1", value=1, created_at=NOW)])  # fmt: skip

    def count() -> int:
        with engine.connect() as conn:
            return conn.execute(sa.text("SELECT count(*) FROM feedback")).scalar()

    upgrade(engine, "0016")
    with engine.connect() as conn:
        got = dict(conn.execute(sa.text("SELECT id, public FROM channels")).all())
    # Slack's visibility unknown until Slack says; the console's channels public (as new ones
    # are made), its personal digests never.
    assert got[1] is None and got[2] in (True, 1) and got[3] is None
    assert count() == 1
    command.downgrade(alembic_config(engine), "0015")
    assert count() == 1
    engine.dispose()
