"""Many channels due in the same minute: how long until each digest starts, and the tick's cost.

A fake platform answers every post after 50 ms. Channels are stored directly (one insert), all
due at 09:00 UTC, following the bundled papers' topics; one tick at 09:00:05 runs them. "Started"
is the digest's first message reaching the platform, measured from the tick's start.

    python -m bench.schedule --channels 1000 [--concurrency 64] [--db postgresql://…]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from bench.common import machine, seed_channels, table
from bot.app import build
from bot.cli.run import WORKER_THREADS
from bot.config import Settings
from bot.runtime.runner import DigestRunner
from bot.runtime.scheduler import DigestScheduler
from digest import BUNDLED_PAPERS
from digest.delivery.steps import Deliveries
from digest.store.schema import LOOK_NOW
from tests.fakes.recording import RecordingAdapter

TOPICS = ("sparse autoencoders", "LLM alignment", "reinforcement learning", "diffusion models")
NINE = datetime(2026, 12, 3, 9, 0, 5, tzinfo=UTC)


class SlowPlatform(RecordingAdapter):
    """Answers each post after ``delay`` seconds; records when each digest's header arrived."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay, self.started = delay, {}

    async def post_part(self, ref, reply, position, key, parent, degrade=False):  # noqa: ANN001
        await asyncio.sleep(self.delay)
        if position == 0:
            self.started.setdefault(ref.channel_id, time.monotonic())
        return await super().post_part(ref, reply, position, key, parent, degrade)


def seed(app, n: int) -> None:
    """``n`` console channels due at 09:00 UTC daily, set up the day before, one topic each."""
    made = datetime(2026, 12, 2, tzinfo=UTC)
    week = "mon,tue,wed,thu,fri,sat,sun"
    topic = lambda cid: (TOPICS[cid % len(TOPICS)],)  # noqa: E731 - one of the four by id
    seed_channels(app.store.engine, n, made, topic, week, next_due_at=LOOK_NOW)


def run(n: int, concurrency: int, delay: float, db: str | None) -> list:
    folder = Path(tempfile.mkdtemp(prefix="bench-schedule-"))
    url = db or f"sqlite:///{folder / 'bench.db'}"
    app = build(url, Settings(index_dir=str(folder / "index"), database_url=url, semantic="off"))
    app.papers.ingest(str(BUNDLED_PAPERS))
    seed(app, n)
    # As `digestbot run` does before it serves: the ranker loaded (here: fitted) first, so the
    # tick measured is the tick's own work, not a one-time index fit and scikit-learn import.
    app.papers.ranker()
    platform = SlowPlatform(delay)
    runner = DigestRunner(Deliveries(app.papers, "bench"), {"console": platform})
    sched = DigestScheduler(runner, clock=lambda: NINE, concurrency=concurrency)

    async def tick() -> dict[str, str]:  # with the bot's worker threads (bot/cli/run.py)
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(WORKER_THREADS))
        return await sched.tick()

    cpu0, t0 = time.process_time(), time.monotonic()
    done = asyncio.run(tick())
    wall, cpu = time.monotonic() - t0, time.process_time() - cpu0
    starts = sorted(s - t0 for s in platform.started.values())
    posted = sum(o.startswith("posted") for o in done.values())
    within = sum(s <= 60 for s in starts)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    app.close()
    p = statistics.quantiles(starts, n=100) if len(starts) > 1 else starts * 99
    return [
        n,
        concurrency,
        posted,
        within,
        f"{p[49]:.1f}",
        f"{p[98]:.1f}",
        f"{starts[-1]:.1f}",
        f"{wall:.1f}",
        f"{cpu:.1f}",
        rss,
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--channels", type=int, nargs="+", default=[1000])
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--delay", type=float, default=0.05, help="platform answer time (s)")
    ap.add_argument("--db", default=None, help="database URL (default: a new SQLite file)")
    a = ap.parse_args()
    rows = [run(n, a.concurrency, a.delay, a.db) for n in a.channels]
    header = [
        "channels",
        "concurrency",
        "posted",
        "started ≤ 60 s",
        "start p50 (s)",
        "start p99 (s)",
        "start max (s)",
        "tick wall (s)",
        "tick CPU (s)",
        "peak RSS (MB)",
    ]
    print(
        table(
            f"Channels due in one minute, platform answering in {a.delay * 1000:.0f} ms",
            header,
            rows,
        )
    )
    print(machine())


if __name__ == "__main__":
    main()
