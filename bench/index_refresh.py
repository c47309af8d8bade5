"""What a running bot pays to make newly stored papers searchable: a delta refresh vs a full fit.

The development papers go into a fresh SQLite store: the first ones are fitted, the rest are
stored by a second Store (another process's ingest) in batches and picked up by the refresher's
rounds; then a restart loads the index stored in the database (a base and its segments). Prints wall and CPU seconds and the fits made:
python -m bench.index_refresh [--batch 100]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import load_eval, machine, table
from digest.index.lifecycle import IndexStore
from digest.ingest.parse import make_record
from digest.store import Store


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    """Print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=100, help="papers stored between two rounds")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    docs, _ = load_eval()
    records = [
        make_record(source="jsonl", id=d.id, title=d.title, abstract=d.abstract) for d in docs
    ]
    base = len(records) - args.batch * args.rounds
    with tempfile.TemporaryDirectory() as tmp:
        url, folder = f"sqlite:///{Path(tmp) / 'bench.db'}", Path(tmp) / "index"
        bot, ingest = Store.open(url), Store.open(url)
        bot.papers.upsert(records[:base])
        indexes = IndexStore(bot, folder)
        indexes.serving = True
        rows = [["full fit", base, *_timed(indexes.tick), indexes.fits]]
        for r in range(args.rounds):
            start = base + r * args.batch
            ingest.papers.upsert(records[start : start + args.batch])  # the other process
            rows.append(
                [
                    f"refresh round {r + 1} (+{args.batch})",
                    start + args.batch,
                    *_timed(indexes.tick),
                    indexes.fits,
                ]
            )
        restarted = IndexStore(Store.open(url), folder)
        restarted.serving = True
        rows.append(
            ["restart (load stored)", len(records), *_timed(restarted.tick), restarted.fits]
        )
        again = IndexStore(bot, None)  # unshared: fits in memory
        rows.append(["full fit of all", len(records), *_timed(again.tick), again.fits])
        bot.close(), ingest.close()
    print(f"Index refresh ({machine()})\n")
    header = ["step", "papers", "wall s", "CPU s", "fits so far (that store)"]
    print(table("Delta refresh vs full fit", header, rows))


if __name__ == "__main__":
    main()
