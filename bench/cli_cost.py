"""What a command that ranks nothing costs from the command line (issue 21, item 4).

    python -m bench.cli_cost             # 5 runs each, a table of CPU-seconds and peak RSS
    python -m bench.cli_cost --runs 9
    git archive 6f99d09 | tar -x -C /tmp/before   # an older tree, measured alongside:
    python -m bench.cli_cost --baseline /tmp/before

Each command runs as a real `digestbot` process on a fresh SQLite database seeded with the
bundled papers (and a channel following a topic, so `channels` and `list` have one to show).
CPU is user+sys from ``resource.getrusage(RUSAGE_CHILDREN)`` around each process; peak RSS is
that process's own (``os.wait4``: RUSAGE_CHILDREN's maxrss is the largest child so far).

Two reference rows price the floor on the same machine at the same moment: a bare interpreter,
and the imports every command needs (SQLAlchemy's ORM for the store, Typer for the command
line, pydantic-settings for the settings). On a shared machine the minimum of the runs is the
figure to compare; the median shows how noisy the moment was. ``--baseline DIR`` adds the two
commands run from another source tree (first on PYTHONPATH), interleaved with these runs.

Each command runs once unmeasured first, so the package's bytecode is cached (as after any
first use); PYTHONDONTWRITEBYTECODE is removed from the children's environment for that reason.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from digest import BUNDLED_PAPERS

BUDGET = 0.8  # CPU-seconds, the bound for commands that rank nothing
DIGESTBOT = [sys.executable, "-m", "bot"]
COMMANDS = {
    "digestbot channels": [*DIGESTBOT, "channels"],
    'digestbot cmd console:lab "/papers list"': [*DIGESTBOT, "cmd", "console:lab", "/papers list"],
}
FLOOR = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import sqlalchemy.orm, typer, pydantic_settings": [
        sys.executable,
        "-c",
        "import sqlalchemy.orm, typer, pydantic_settings",
    ],
}


def environment(folder: Path) -> dict[str, str]:
    """A clean environment: this folder's database and index, no settings from the caller."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGESTBOT_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        HOME=str(folder),
        DIGESTBOT_DATABASE_URL=f"sqlite:///{folder / 'digestbot.db'}",
        DIGESTBOT_INDEX_DIR=str(folder / "index"),
    )
    return env


Row = tuple[list[str], dict[str, str]]  # (argv, environment)


def run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Run one process to its end: (user+sys CPU-seconds, peak RSS in MB); a failure stops."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, own = os.wait4(proc.pid, 0)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.read().decode()[-500:]}")
    proc.stderr.close()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, own.ru_maxrss / 1024


def seed(env: dict[str, str], cwd: Path) -> None:
    """The bundled papers (index fitted, as `ingest` does) and console:lab following a topic."""
    for argv in (
        [*DIGESTBOT, "ingest", str(BUNDLED_PAPERS)],
        [*DIGESTBOT, "cmd", "console:lab", "/papers subscribe sparse autoencoders"],
    ):
        run(argv, env, cwd)


def measure(rows: dict[str, Row], runs: int, cwd: Path) -> list[tuple]:
    """Per row: (name, min CPU, median CPU, peak RSS MB); runs interleaved row by row, so a
    busy moment weighs on every row alike."""
    for argv, env in rows.values():
        run(argv, env, cwd)  # warm-up: bytecode cached, files in the page cache
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in rows}
    for _ in range(runs):
        for name, (argv, env) in rows.items():
            samples[name].append(run(argv, env, cwd))
    return [
        (
            name,
            min(c for c, _ in got),
            statistics.median(c for c, _ in got),
            max(r for _, r in got),
        )
        for name, got in samples.items()
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="measured runs per command")
    ap.add_argument("--baseline", type=Path, help="another source tree to run the commands from")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="digestbot-cli-cost-"))
    try:
        env = environment(folder)
        seed(env, folder)
        rows = {name: (argv, env) for name, argv in {**COMMANDS, **FLOOR}.items()}
        if args.baseline is not None:
            old = {**env, "PYTHONPATH": str(args.baseline.resolve())}
            rows |= {f"{name} [baseline]": (argv, old) for name, argv in COMMANDS.items()}
        results = measure(rows, args.runs, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    load = os.getloadavg()[0]
    print(f"{args.runs} runs each; load average {load:.1f} on {os.cpu_count()} CPUs")
    print(f"{'command':<58} {'CPU-s min':>9} {'median':>7} {'peak RSS MB':>11}  ≤ {BUDGET} s")
    for name, low, mid, rss in results:
        verdict = "(floor)" if name in FLOOR else ("yes" if low <= BUDGET else "NO")
        print(f"{name:<58} {low:>9.2f} {mid:>7.2f} {rss:>11.0f}  {verdict}")


if __name__ == "__main__":
    main()
