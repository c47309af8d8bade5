"""A wired app whose Zotero is the strict local fake (tests/fakes/zotero.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.commands import Context
from digest.models import ChannelRef
from tests.fakes.zotero import FakeZotero
from tests.support.corpus import synthetic_records

USER_LIB = "users/475425"
KEY = "P9NiFoyLeZu2bZNvvuQPDWsd"  # 24 letters and digits, as zotero.org issues them
SECRET = "correct horse battery staple"


@pytest.fixture
def zotero_fake():
    with FakeZotero() as fake:
        fake.grant(KEY, USER_LIB)
        yield fake


def build_app(db_url: str, folder: Path, fake: FakeZotero, secret: str | None = SECRET):
    from bot.app import build
    from bot.config import Settings

    settings = Settings(
        index_dir=str(folder / "index"),
        database_url=db_url,
        secret_key=secret,
        zotero_api_url=fake.url,
    )
    application = build(db_url, settings)
    application.store.papers.upsert(synthetic_records())
    return application


@pytest.fixture
def zapp(db_url: str, tmp_path: Path, zotero_fake: FakeZotero):
    """On SQLite, and on PostgreSQL when DIGESTBOT_TEST_POSTGRES_URL is set."""
    application = build_app(db_url, tmp_path, zotero_fake)
    yield application
    application.close()


def console_ctx(user: str = "ann") -> Context:
    """As the console REPL builds it (bot/cli/run.py)."""
    return Context(
        ChannelRef("console", "general"),
        user,
        dm=ChannelRef("console", f"@{user}"),
        name="the console",
        visible=None,
        public=True,
    )


def answers(*values: str):
    """A terminal that answers the form's fields in order, recording which were secret."""
    asked: list[tuple[str, bool]] = []
    queue = list(values)

    def ask(label: str, secret: bool) -> str | None:
        asked.append((label, secret))
        return queue.pop(0)

    ask.asked = asked  # type: ignore[attr-defined]
    return ask
