"""Replicas starting together on an empty database: migrations run once, nobody crashes.

Deliberate break tried: upgrade() without migration_lock() -> PostgreSQL UniqueViolation
(pg_type) / DuplicateTable, SQLite "table already exists": this test went red on both.
"""

from __future__ import annotations

import os
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
