"""Replicas sharing the fitted index through the database: fits, segments, loads, time to searchable.

Each replica is an IndexStore on its own engine and its own index folder (as replicas on separate
volumes are), serving as a running bot does. A writer stores ``--base`` papers; every replica
refreshes (one fits, the others load); the writer stores a ``--batch`` of papers; every replica
refreshes at once on a thread of its own, and the time from the batch's commit until each
replica's index holds it is recorded, with each replica's CPU seconds (thread time).

python -m bench.shared_index [--db postgresql://…/empty_db] [--base 5000] [--batch 5000]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

from bench.common import machine, table
from bench.load_data import write_papers
from digest.index.lifecycle import FORMAT, IndexStore
from digest.ingest import SourceConfig
from digest.ingest.pipeline import ingest
from digest.store import Store


def _reset(url: str) -> None:
    if url.startswith("postgresql"):
        from sqlalchemy import create_engine, text

        engine = create_engine(url, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(text("DROP SCHEMA public CASCADE"))
            conn.execute(text("CREATE SCHEMA public"))
        engine.dispose()


def main() -> None:
    """Print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", help="an empty database to use (its schema is dropped); default SQLite")
    ap.add_argument("--base", type=int, default=5000)
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--replicas", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db or f"sqlite:///{Path(tmp) / 'bench.db'}"
        _reset(url)
        writer = Store.open(url)
        base, batch = Path(tmp) / "base.jsonl", Path(tmp) / "batch.jsonl"
        write_papers(base, args.base, "b", 1)
        write_papers(batch, args.batch, "n", 2)
        ingest(writer, str(base), "jsonl", SourceConfig())
        replicas = [
            IndexStore(Store.open(url, migrate=False), Path(tmp) / f"index-{n}")
            for n in range(args.replicas)
        ]
        rows = []
        for n, r in enumerate(replicas):
            r.serving = True
            wall, cpu = time.perf_counter(), time.thread_time()
            r.tick()
            rows.append(
                [f"replica {n}: start", time.perf_counter() - wall, time.thread_time() - cpu]
            )
        ingest(writer, str(batch), "jsonl", SourceConfig())
        stored = time.perf_counter()
        want = writer.papers.count()
        found: dict[int, tuple[float, float]] = {}
        behind: dict[int, tuple[float, float]] = {}

        def serve(n: int, r: IndexStore) -> None:
            cpu = time.thread_time()
            while True:  # a running bot's refresher rounds (every 10 s there; here at once)
                r.refresh()
                if r.index is not None and len(r.index) >= want:
                    break
                time.sleep(0.2)
            found[n] = (time.perf_counter() - stored, time.thread_time() - cpu)
            wall, cpu = time.perf_counter(), time.thread_time()
            r.refit_if_due()  # the rest of the round: a drift refit, a merge, when due
            r.merge_if_due()
            behind[n] = (time.perf_counter() - wall, time.thread_time() - cpu)

        threads = [threading.Thread(target=serve, args=(n, r)) for n, r in enumerate(replicas)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for n in range(len(replicas)):
            rows.append([f"replica {n}: +{args.batch} searchable", *found[n]])
        for n in range(len(replicas)):
            rows.append([f"replica {n}: refit/merge behind answers", *behind[n]])
        parts, size = writer.index_parts.sizes(FORMAT)
        counts = [
            f"replica {n}: fits {r.fits}, segments computed {r.appends}, parts read {r.loads}"
            for n, r in enumerate(replicas)
        ]
    load = os.getloadavg()
    print(f"Shared index ({machine()}; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})")
    print(f"database: {url.split('@')[-1]}; {args.base} papers, then {args.batch} more\n")
    print(table("Per replica", ["step", "wall s", "CPU s (its thread)"], rows))
    print("\n".join(counts))
    print(f"index parts stored: {parts}, {int(size) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
