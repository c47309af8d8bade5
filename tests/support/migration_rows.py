"""Rows written straight into an older schema, for the migration tests: a paper, channels, and
one vote on the first channel (what a migration must not lose)."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def channel(
    id: int,
    platform: str = "console",
    workspace: str = "",
    channel_id: str = "lab",
    **extra: object,
) -> dict:
    """A channel row with the columns every revision since 0010 has (``extra``: later ones)."""
    return dict(
        id=id,
        platform=platform,
        workspace=workspace,
        channel_id=channel_id,
        name="lab",
        timezone="UTC",
        digest_time="09:00",
        weekdays="mon",
        digest_size=5,
        threshold=0.3,
        paused=False,
        quiet_when_empty=False,
        threaded=False,
        backlog=True,
        admin_only=False,
        created_at=NOW,
        **extra,
    )


def seed(engine: sa.Engine, channels: list[dict]) -> None:
    """Paper p1, ``channels``, and ann's 👍 of p1 in the first of them."""
    meta = sa.MetaData()
    t = {n: sa.Table(n, meta, autoload_with=engine) for n in ("papers", "channels", "feedback")}
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
                    seq=1,
                )
            ],
        )
        conn.execute(t["channels"].insert(), channels)
        conn.execute(
            t["feedback"].insert(),
            [
                dict(
                    id=1,
                    channel_id=channels[0]["id"],
                    user="ann",
                    paper_id="p1",
                    value=1,
                    created_at=NOW,
                )
            ],
        )


def votes(engine: sa.Engine) -> int:
    """How many votes the database holds."""
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT count(*) FROM feedback")).scalar()


def merge_personal_digests(engine: sa.Engine) -> None:
    """Migration 0017 (one personal digest per person and platform) run again over what a test
    made at the head revision: its downgrade changes nothing, its upgrade merges."""
    from alembic import command

    from digest.store.database import alembic_config, upgrade

    command.downgrade(alembic_config(engine), "0016")
    upgrade(engine, "0017")
