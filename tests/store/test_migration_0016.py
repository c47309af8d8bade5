"""Migration 0016 (channels.public) keeps every channel's votes, on SQLite and PostgreSQL, up
and down, and leaves every existing chat channel's visibility unknown (so counted as private
until its platform says); the console's shared channels are public, as new ones are made.

Breaks that turn this red (seen): the column given a server default of true (an old private
channel would be named in other digests at once); no update of the console's channels (their
👍 vanished from other channels' marks after the upgrade)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from digest.store.database import alembic_config, make_engine, upgrade
from tests.support.migration_rows import channel, seed, votes


def test_public_arrives_unknown_and_nothing_is_lost(db_url):
    engine = make_engine(db_url)
    upgrade(engine, "0015")
    seed(
        engine,
        [
            channel(1, "slack", "T1", "C1", share_votes=True),
            channel(2, share_votes=True),
            channel(3, channel_id="@ann", share_votes=True),
        ],
    )
    upgrade(engine, "0016")
    with engine.connect() as conn:
        got = dict(conn.execute(sa.text("SELECT id, public FROM channels")).all())
    # Slack's visibility unknown until Slack says; the console's channels public (as new ones
    # are made), its personal digests never.
    assert got[1] is None and got[2] in (True, 1) and got[3] is None
    assert votes(engine) == 1
    command.downgrade(alembic_config(engine), "0015")
    assert votes(engine) == 1
    engine.dispose()
