"""What a weekly-picture sweep costs with many channels (it runs every 10 minutes in the bot).

N console channels with two topics each (the picture on by default) are stored directly. Timed:
``WeeklyPictures.due`` on Monday after the digest time (every channel owes its picture), then
after every picture was claimed (Tuesday: nothing owed), and, as the floor of the walk the
sweep used to do every time, reading every channel (``channels.all()``). Then what drawing costs
the event loop that answers commands: 20 pictures drawn from a worker thread in this process (as
before) or by the child process the running bot now uses, while a task on the loop sleeps 5 ms
again and again; its lateness is what every acknowledgement would wait.

    python -m bench.weekly_sweep --channels 1000 10000 [--db postgresql://…]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import insert

from bench.common import machine, seed_channels, table
from bot.runtime.background import ProcessDrawer
from digest.store import Store
from digest.store.schema import ChannelRow, DeliveryRow
from digest.weekly.draw import draw_here
from digest.weekly.picture import WeeklyPictures, WeeklyStats

MONDAY_AFTER = datetime(2026, 11, 30, 9, 5, tzinfo=UTC)


def seed(store: Store, n: int) -> None:
    """``n`` channels with two topics each, made a month ago."""
    made = MONDAY_AFTER - timedelta(days=30)
    seed_channels(store.engine, n, made, lambda _: ("diffusion models", "graph neural networks"))


def claim_all(store: Store) -> None:
    """Every channel's picture for the week, claimed (as after Monday's sweeps)."""
    week = MONDAY_AFTER.date()
    with store.engine.begin() as conn:
        ids = [r.id for r in conn.execute(ChannelRow.__table__.select())]
        at = MONDAY_AFTER
        rows = [
            dict(channel_id=cid, digest_date=week, kind="weekly", status="posted")
            | dict(claimed_by="bench", claimed_at=at, fence=1, attempts=0, near_misses=0)
            for cid in ids
        ]
        conn.execute(insert(DeliveryRow), rows)


def timed(fn) -> tuple[float, float, object]:  # noqa: ANN001
    """(wall s, CPU s, result) of one call."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def run(n: int, db: str | None) -> list:
    url = db or f"sqlite:///{Path(tempfile.mkdtemp()) / 'weekly.db'}"
    store = Store.open(url)
    try:
        seed(store, n)
        pics = WeeklyPictures(store)
        owed_w, owed_c, owed = timed(lambda: pics.due(MONDAY_AFTER, {"console"}))
        claim_all(store)
        none_w, none_c, none = timed(
            lambda: pics.due(MONDAY_AFTER + timedelta(days=1), {"console"})
        )
        all_w, all_c, _ = timed(store.channels.all)
        backend = store.engine.dialect.name
    finally:
        store.close()
    return [
        backend,
        f"{n:,}",
        f"{len(owed):,}",
        f"{owed_w:.2f}",
        f"{owed_c:.2f}",
        f"{len(none):,}",
        f"{none_w:.3f}",
        f"{none_c:.3f}",
        f"{all_w:.2f}",
        f"{all_c:.2f}",
    ]


async def _lag_while(draw, pictures: int) -> tuple[float, list[float]]:  # noqa: ANN001
    """(wall s to draw ``pictures``, the loop's lateness samples in ms) while drawing."""
    weeks = tuple(MONDAY_AFTER.date() - timedelta(weeks=7 - i) for i in range(8))
    stats = WeeklyStats(
        weeks,
        {f"topic {k}": tuple((i * k) % 5 for i in range(8)) for k in range(1, 5)},
        (1,) * 8,
        (0,) * 8,
    )
    late: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        while not done.is_set():
            t = time.perf_counter()
            await asyncio.sleep(0.005)
            late.append((time.perf_counter() - t - 0.005) * 1000)

    task = asyncio.create_task(ticker())
    t0 = time.perf_counter()
    for _ in range(pictures):
        await asyncio.to_thread(draw, stats, "Weekly picture for #bench")
    wall = time.perf_counter() - t0
    done.set()
    await task
    return wall, late


def lag_rows(pictures: int = 20) -> list[list[str]]:
    """The loop's lateness while drawing, in this process and in the child."""
    draw_here(WeeklyStats((MONDAY_AFTER.date(),), {"a": (1,)}, (0,), (0,)), "warm")  # import
    child = ProcessDrawer()
    child(WeeklyStats((MONDAY_AFTER.date(),), {"a": (1,)}, (0,), (0,)), "warm")  # start it
    rows = []
    try:
        for name, draw in (("thread in the bot", draw_here), ("child process", child)):
            wall, late = asyncio.run(_lag_while(draw, pictures))
            q = statistics.quantiles(late, n=100)
            rows.append(
                [
                    name,
                    str(pictures),
                    f"{wall:.1f}",
                    f"{q[49]:.1f}",
                    f"{q[98]:.1f}",
                    f"{max(late):.1f}",
                ]
            )
    finally:
        child.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--channels", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--db", default=None, help="an empty database's URL (default: new SQLite)")
    a = ap.parse_args()
    header = [
        "backend",
        "channels",
        "owed Monday",
        "wall s",
        "CPU s",
        "owed Tuesday",
        "wall s",
        "CPU s",
        "read every channel: wall s",
        "CPU s",
    ]
    rows = [run(n, a.db) for n in a.channels]
    print(table("Weekly-picture sweep: finding what is owed", header, rows))
    print(
        table(
            "The event loop while weekly pictures are drawn",
            ["drawn by", "pictures", "wall s", "loop lateness p50 ms", "p99 ms", "max ms"],
            lag_rows(),
        )
    )
    print(machine())


if __name__ == "__main__":
    main()
