"""Votes as if cast long ago: a second press of the same vote within a second is a double click
(it keeps the vote), so tests of a deliberate second press move the first one back."""

from __future__ import annotations

from sqlalchemy import Engine, create_engine, update

from digest.store.schema import FeedbackRow


def settle_votes(where: object) -> None:
    """Every vote stored so far as pressed before the double-click window (its ``pressed_at``
    cleared, as for votes from before it was recorded). ``where``: an app, a store, an engine
    or a database URL."""
    if isinstance(where, str):
        engine, own = create_engine(where), True
    else:
        store = getattr(where, "store", where)
        engine, own = (where if isinstance(where, Engine) else store.engine), False
    with engine.begin() as conn:
        conn.execute(update(FeedbackRow).values(pressed_at=None))
    if own:
        engine.dispose()
