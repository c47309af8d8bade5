"""Replicas starting together on an empty database: migrations run once, nobody crashes.

Deliberate break tried: upgrade() without migration_lock() -> PostgreSQL UniqueViolation
(pg_type) / DuplicateTable, SQLite "table already exists": this test went red on both.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest
from sqlalchemy import create_engine, inspect

CODE = "import sys; from digest.store import Store; Store.open(sys.argv[1]).close()"


def start_together(url: str, n: int) -> list[subprocess.CompletedProcess]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGESTBOT_")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CODE, url], env=env, stderr=subprocess.PIPE, text=True
        )
        for _ in range(n)
    ]
    return [(p.wait(timeout=120), p.stderr.read()) for p in procs]


def test_replicas_migrate_an_empty_database_at_the_same_time(db_url):
    results = start_together(db_url, 4)
    assert all(code == 0 for code, _ in results), [err[-800:] for _, err in results]
    engine = create_engine(db_url.replace("postgresql://", "postgresql+psycopg://"))
    tables = set(inspect(engine).get_table_names())
    engine.dispose()
    assert {"papers", "deliveries", "delivery_messages", "counters"} <= tables


@pytest.mark.parametrize("n", [1])
def test_the_lock_file_is_beside_the_sqlite_database(tmp_path, n):
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    assert start_together(url, n)[0][0] == 0
    assert (tmp_path / "bot.migrate.lock").exists()


class _LockedOnce:
    """A DBAPI cursor whose first switch to WAL finds the file locked, as SQLite may answer at once
    (without busy_timeout) when replicas open a new file together; it records what ran."""

    def __init__(self, failures: int) -> None:
        self.failures, self.ran, self.mode = failures, [], "delete"

    def execute(self, sql: str) -> _LockedOnce:
        self.ran.append(sql)
        if sql == "PRAGMA journal_mode=WAL":
            if self.failures:
                self.failures -= 1
                raise sqlite3.OperationalError("database is locked")
            self.mode = "wal"
        return self

    def fetchone(self) -> tuple[str]:
        return (self.mode,)


def test_a_new_file_locked_while_switching_to_wal_is_retried_not_a_crash():
    """Start-up survives SQLite's immediate 'database is locked' on the switch to WAL.

    Breaks that turn this red: _wal without its retry loop (the error reaches start-up, as in
    the CI run where one of four replicas crashed); retrying on every OperationalError, not only
    'locked' (the disk error below would be tried again and again until the deadline)."""
    from digest.store import database

    cur = _LockedOnce(failures=3)
    database._wal(cur)
    assert cur.mode == "wal" and cur.ran.count("PRAGMA journal_mode=WAL") == 4

    class Broken(_LockedOnce):
        def execute(self, sql: str) -> Broken:
            self.ran.append(sql)
            raise sqlite3.OperationalError("disk I/O error")

    broken = Broken(failures=0)
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        database._wal(broken)
    assert len(broken.ran) == 1  # raised at once: only 'locked' is worth waiting for
    settled = _LockedOnce(failures=0)
    settled.mode = "wal"
    database._wal(settled)  # already WAL (the mode is kept in the file): nothing to switch
    assert settled.ran == ["PRAGMA journal_mode"]
