"""Migration 0018 (feedback.pressed_at) keeps every vote, on SQLite and PostgreSQL, up and down;
a vote cast before it has no press time, so pressing the same button again still withdraws it
(it was cast long before: no double click).

Breaks that turn this red (each tried): the column given a server default of now() (every old
vote counts as just pressed: the next press is taken for a double click and nothing is
withdrawn); set_feedback's window not treating NULL as settled (the same)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from digest.store import Store
from digest.store.database import alembic_config, make_engine, upgrade
from tests.support.migration_rows import channel, seed, votes


def test_votes_survive_and_an_old_vote_can_still_be_withdrawn(db_url):
    engine = make_engine(db_url)
    upgrade(engine, "0017")
    seed(engine, [channel(1, "slack", "T1", "C1", share_votes=True)])
    upgrade(engine, "0018")
    with engine.connect() as conn:
        pressed = conn.execute(sa.text("SELECT pressed_at FROM feedback")).scalar_one()
    assert pressed is None and votes(engine) == 1
    command.downgrade(alembic_config(engine), "0017")
    assert votes(engine) == 1
    upgrade(engine, "head")
    engine.dispose()
    store = Store.open(db_url)
    try:
        assert store.channels.set_feedback(1, "ann", "p1", 1) == 0  # withdrawn, not kept
    finally:
        store.close()
