"""Load bench: the tables it prints (percentiles, rows per backend and platform, the report)."""

from __future__ import annotations

import math
import os
import platform
from datetime import UTC, datetime

import numpy as np

from bench.load_data import SLOW, Config, Result


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else math.nan


def fmt(x: float | None, unit: str = "") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:,.2f}{unit}" if x < 100 else f"{x:,.0f}{unit}"


def command_rows(results: list[Result]) -> list[list[str]]:
    rows = []
    for r in results:
        for plat in sorted({s.platform for s in r.samples}):
            ss = [s for s in r.samples if s.platform == plat]
            acks = [s.ack - s.sent for s in ss if s.ack is not None]
            firsts = [s.answered - s.sent for s in ss if s.answered is not None]
            slow = sum(
                1
                for s in ss
                if s.ack is None
                or s.answered is None
                or s.ack - s.sent >= SLOW
                or s.answered - s.sent >= SLOW
            )
            unanswered = sum(1 for s in ss if s.ack is None or s.answered is None)
            rows.append(
                [
                    r.backend,
                    plat,
                    str(len(ss)),
                    *(fmt(pct(acks, q) * 1000) for q in (50, 99)),
                    fmt(max(acks, default=math.nan)),
                    *(fmt(pct(firsts, q) * 1000) for q in (50, 99)),
                    fmt(max(firsts, default=math.nan)),
                    str(slow),
                    str(unanswered),
                ]
            )
    return rows


def backend_rows(results: list[Result], cfg: Config) -> list[list[str]]:
    rows = []
    for r in results:
        d = r.due
        rows.append(
            [
                r.backend,
                fmt(r.ready_s),
                fmt(r.first_search_s),
                fmt(r.ingest_s) + ("" if r.ingest_rc == 0 else f" (rc {r.ingest_rc})"),
                *(
                    fmt(r.visible[k]) if k in r.visible else f"not in {cfg.visible_timeout:.0f}"
                    for k in ("known words", "new word")
                ),
                *(
                    [
                        f"{d.get('on_time', 0):,} / {cfg.channels:,}",
                        fmt(d.get("p50")),
                        fmt(d.get("max")),
                    ]
                    if d
                    else ["not run"] * 3
                ),
                fmt(r.cpu_s),
                fmt(r.rss_mb),
                fmt(r.child_cpu_s),
                fmt(r.child_rss_mb),
            ]
        )
    return rows


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


COMMAND_HEADER = [
    "backend",
    "platform",
    "commands",
    "ack p50 ms",
    "ack p99 ms",
    "ack max s",
    "first response p50 ms",
    "p99 ms",
    "max s",
    "≥ 3 s",
    "unanswered",
]
BACKEND_HEADER = [
    "backend",
    "bot ready s",
    "first search s",
    "ingest s",
    "new paper found s (its words)",
    "(a new word)",
    "digests started ≤ 60 s",
    "start lag p50 s",
    "max s",
    "bot CPU s (phase 1)",
    "bot peak RSS MB",
    "its children's CPU s (embedding worker)",
    "children's peak RSS MB",
]


def report(cfg: Config, results: list[Result], cli: list[tuple[str, float, float]]) -> str:
    """The printed tables (Markdown)."""
    parts = [
        table(COMMAND_HEADER, command_rows(results)),
        "",
        table(BACKEND_HEADER, backend_rows(results, cfg)),
    ]
    for r in results:
        seeds = ", ".join(f"{k} {v:.1f} s" for k, v in r.seed_s.items())
        d = r.due
        if not d:  # --no-due
            parts.append(
                f"\n{r.backend}: seeding {seeds}; due phase not run"
                + "".join(f"; {n}" for n in r.notes)
            )
            continue
        parts.append(
            f"\n{r.backend}: seeding {seeds}; due {d.get('due')} UTC: schedules set in "
            f"{fmt(d.get('set_s'))} s, restart answered after {fmt(d.get('restart_s'))} s, "
            f"{d.get('started', 0):,} digests started in the window ({d.get('early', 0)} early), "
            f"bot CPU {fmt(d.get('cpu_s'))} s, peak RSS {fmt(d.get('rss_mb'))} MB"
            + "".join(f"; {n}" for n in r.notes)
        )
    if cli:
        parts += [
            "",
            table(
                [
                    "command (19 bundled papers, semantic default)",
                    "CPU s (median of 3)",
                    "peak RSS MB",
                ],
                [[n, fmt(c), fmt(m)] for n, c, m in cli],
            ),
        ]
    return "\n".join(parts)


def machine() -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load average {load}"
    )
