"""Shared fixtures: stores on SQLite and (when configured) PostgreSQL, and a synthetic corpus."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from digest.store import Store
from tests.support.corpus import synthetic_records

PG_ENV = "DIGESTBOT_TEST_POSTGRES_URL"
# Semantic ranking embeds papers at ingest (0.13 s each): only tests/rank/test_semantic.py and the tests
# that ask for it turn it on, so the rest of the suite stays fast and lexical.
os.environ["DIGESTBOT_SEMANTIC"] = "off"
# Whatever a test undoes, the default data folder (platformdirs reads XDG_DATA_HOME on Linux) is a
# scratch one: a test that loses its DIGESTBOT_DATABASE_URL must never open the user's database.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="digestbot-tests-")
# Parallel checkouts on one server each set their own name, so their suites cannot collide.
TEST_DB = os.environ.get("DIGESTBOT_TEST_POSTGRES_DBNAME", "digestbot_test")


def _postgres_url() -> str:
    """A clean database of our own on the configured server (created on first use).

    When DIGESTBOT_TEST_POSTGRES_URL is set and the server is unreachable this raises,
    so CI fails instead of quietly skipping the PostgreSQL half of the suite.
    """
    base = make_url(os.environ[PG_ENV])
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        exists = conn.execute(
            text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": TEST_DB}
        ).first()
        if not exists:
            conn.execute(text(f'CREATE DATABASE "{TEST_DB}"'))
    admin.dispose()
    url = base.set(database=TEST_DB)
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    return url.render_as_string(hide_password=False)


def _backends() -> list:
    pg = pytest.param("postgres", marks=pytest.mark.postgres)
    if not os.environ.get(PG_ENV):
        pg = pytest.param(
            "postgres", marks=[pytest.mark.postgres, pytest.mark.skip(reason=f"{PG_ENV} not set")]
        )
    return ["sqlite", pg]


@pytest.fixture(params=_backends())
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database URL on each backend."""
    if request.param == "postgres":
        return _postgres_url()
    return f"sqlite:///{tmp_path / 'test.db'}"


@pytest.fixture
def store(db_url: str):
    """A migrated store on each backend."""
    s = Store.open(db_url)
    yield s
    s.close()


@pytest.fixture
def sqlite_store(tmp_path: Path):
    """A migrated SQLite store (for tests where the backend does not matter)."""
    s = Store.open(f"sqlite:///{tmp_path / 'test.db'}")
    yield s
    s.close()


@pytest.fixture(scope="session")
def corpus_records():
    """A synthetic corpus with known topics (see tests/support/corpus.py)."""
    return synthetic_records()


@pytest.fixture
def env_isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point DIGESTBOT_ settings at a temporary folder so tests never touch the user's data."""
    for key in list(os.environ):
        if key.startswith("DIGESTBOT_") and key not in (PG_ENV, "DIGESTBOT_SEMANTIC"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("DIGESTBOT_DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    monkeypatch.setenv("DIGESTBOT_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def make_app(db_url: str, folder: Path, records=None):
    """A wired application on ``db_url`` with the synthetic corpus stored."""
    from bot.app import build
    from bot.config import Settings

    application = build(db_url, Settings(index_dir=str(folder / "index"), database_url=db_url))
    application.store.papers.upsert(records if records is not None else synthetic_records())
    return application


@pytest.fixture
def app(tmp_path: Path):
    """A wired application on SQLite with the synthetic corpus."""
    application = make_app(f"sqlite:///{tmp_path / 'app.db'}", tmp_path)
    yield application
    application.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark tests/reliability as `reliability`; skip `semantic` tests when the extra is missing.

    The model's packages are part of the default install, so these skip only where they were
    removed (or a platform has no onnxruntime wheel); CI fails instead of skipping.
    """
    reliability = Path(__file__).parent / "reliability"
    missing = None
    for item in items:
        if reliability in Path(item.path).parents:
            item.add_marker(pytest.mark.reliability)
        if item.get_closest_marker("semantic"):
            if missing is None:
                from digest.index.embeddings import semantic_available

                missing = not semantic_available()
            if missing:
                item.add_marker(pytest.mark.skip(reason="semantic extra not installed"))


def say_as_ann(app, channel: str, text: str):
    """``text`` typed by ann (a channel admin) in console channel ``channel`` on 1 Dec 2026."""
    from datetime import UTC, datetime

    from bot.commands import Context
    from digest.models import ChannelRef

    ctx = Context(
        ChannelRef("console", channel),
        "ann",
        True,
        ChannelRef("console", "@ann"),
        datetime(2026, 12, 1, tzinfo=UTC),
    )
    return app.commands.handle(text, ctx)
