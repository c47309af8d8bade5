"""Engine creation and schema migration; the only place that knows SQLite from PostgreSQL."""

from __future__ import annotations

import fcntl
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import CursorResult, Engine, Result, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, OperationalError

from digest.errors import StoreUnavailableError
from digest.text.passwords import hide_password

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


BUSY_TIMEOUT_S = 30.0  # how long a statement waits for SQLite's write lock before "locked"
WAL_WAIT_S = BUSY_TIMEOUT_S  # how long a new file's switch to WAL may wait


def _wal(cur) -> None:  # noqa: ANN001 - DBAPI cursor
    """Put the file in WAL mode (once: the mode is stored in the file), retrying while locked.

    Switching needs the file to itself, and SQLite may answer "database is locked" at once,
    without waiting out busy_timeout, when several processes open a new file together (replicas
    starting at once: seen in CI), so the switch is retried rather than left to crash start-up.
    """
    deadline = time.monotonic() + WAL_WAIT_S
    while True:
        try:
            if cur.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _sqlite_pragmas(dbapi_conn, _record) -> None:  # noqa: ANN001 - DBAPI connection
    """WAL lets searches read while an ingest writes; busy_timeout waits instead of 'locked'."""
    cur = dbapi_conn.cursor()
    cur.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
    _wal(cur)
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def make_engine(url: str, create_folder: bool = False) -> Engine:
    """An engine for ``url``; SQLite files get safe pragmas, and their folder when asked.

    Only the default data directory is created (``create_folder``): a folder missing from a
    URL someone typed is a typo far more often than a wish, so it is an error, not a new tree.
    """
    try:
        parsed = make_url(url)
        parsed.port  # noqa: B018 - a malformed port ("54x2") only raises when read
    except (ArgumentError, ValueError) as exc:
        raise StoreUnavailableError(f"Invalid database URL {hide_password(url)!r}.") from exc
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")  # we ship psycopg 3, not psycopg2
    is_sqlite = parsed.get_backend_name() == "sqlite"
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):  # e.g. mysql: no driver helps
        raise StoreUnavailableError(
            f"Unsupported database {parsed.get_backend_name()!r} in {hide_password(url)!r}: only "
            "SQLite (sqlite:///FILE) and PostgreSQL (postgresql://USER@HOST/DB) are supported."
        )
    if is_sqlite and parsed.database and parsed.database != ":memory:":
        _sqlite_folder(Path(parsed.database).expanduser().parent, url, create_folder)
    kwargs: dict = {"connect_args": {"timeout": 30}} if is_sqlite else {"pool_pre_ping": True}
    if parsed.database not in (None, "", ":memory:"):
        # A running bot works in many threads (bot/cli/run.py); the default pool (5 + 10) would
        # make a command wait for a connection held by digests. 40 per process, so two replicas
        # stay within PostgreSQL's default 100 connections.
        kwargs.update(pool_size=20, max_overflow=20)
    try:
        engine = create_engine(parsed, **kwargs)
    except NoSuchModuleError as exc:
        raise StoreUnavailableError(
            f"Unsupported database URL scheme in {hide_password(url)!r}; use sqlite:///FILE or "
            "postgresql://USER@HOST/DB."
        ) from exc
    except ModuleNotFoundError as exc:
        raise StoreUnavailableError(
            f"Database driver missing for {parsed.drivername}: "
            'pip install -e ".[postgres]" (in the digestbot checkout).'
        ) from exc
    if is_sqlite:
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_folder(folder: Path, url: str, create: bool) -> None:
    """Create the SQLite file's folder, or say plainly that it is missing."""
    if create:
        folder.mkdir(parents=True, exist_ok=True)
    elif not folder.is_dir():
        raise StoreUnavailableError(
            f"Cannot open database {hide_password(url)}: the folder {folder} does not exist "
            "(create it first, or fix the path)."
        )


def sqlite_file(engine: Engine) -> Path | None:
    """The file of a SQLite database, resolved (None for PostgreSQL and in-memory databases)."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    return Path(database).expanduser().resolve()


def check_connection(engine: Engine) -> None:
    """Fail with one clear line when the database cannot be reached."""
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        safe = engine.url.render_as_string(hide_password=True)
        raise StoreUnavailableError(f"Cannot reach database {safe}: {reason}") from exc


def alembic_config(engine: Engine) -> Config:
    """An Alembic config bound to ``engine`` without needing an alembic.ini on disk."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection_engine"] = engine
    return cfg


#: Advisory lock key for migrations (any constant shared by every digestbot process).
MIGRATION_LOCK = 0x64696765


@contextmanager
def migration_lock(engine: Engine) -> Iterator[None]:
    """Only one process migrates at a time: a PostgreSQL advisory lock, or a lock file for SQLite."""
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK})
            conn.commit()
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK})
                conn.commit()
        return
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        yield
        return
    with open(Path(database).expanduser().with_suffix(".migrate.lock"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # released when the file closes, even on a crash
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def revision_of(url: str) -> str | None:
    """The migration a database is at; None for one with no tables yet (or no file)."""
    from alembic.runtime.migration import MigrationContext

    try:
        engine = make_engine(url)  # a missing folder is not made here: Store.open decides
    except StoreUnavailableError:
        return None  # Store.open says why
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    except Exception:  # noqa: BLE001 - unreachable or missing: Store.open says why, not this
        return None
    finally:
        engine.dispose()


_REVISION = re.compile(r'^(down_revision|revision)\s*=\s*"([^"]+)"\s*$', re.MULTILINE)


def _head() -> str | None:
    """The newest revision, read from the migration files (None unless there is exactly one)."""
    revisions, parents = set(), set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        found = dict(m.groups() for m in _REVISION.finditer(path.read_text("utf-8")))
        if "revision" not in found:
            return None  # a form this reader does not know: let Alembic decide
        revisions.add(found["revision"])
        parents.add(found.get("down_revision"))
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def _at_head(engine: Engine) -> bool:
    """True when the database is already at the newest revision (one cheap query)."""
    head = _head()
    if head is None:
        return False
    try:
        with engine.connect() as conn:
            return conn.execute(
                text("SELECT version_num FROM alembic_version")
            ).scalars().all() == [head]
    except DBAPIError:  # no such table yet: a new database
        return False


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply migrations up to ``revision``; idempotent and safe when replicas start together.

    A database already at the head is left alone without loading Alembic and its migration
    scripts (half a CPU-second that every short command paid)."""
    check_connection(engine)
    if revision == "head" and _at_head(engine):
        return
    from alembic import command

    with migration_lock(engine):
        command.upgrade(alembic_config(engine), revision)


def rows_changed(result: Result[Any]) -> int:
    """Rows an UPDATE or DELETE touched (SQLAlchemy types ``execute()`` as a plain Result)."""
    return cast(CursorResult[Any], result).rowcount
