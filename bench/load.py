"""Load bench (issue 21): a real `digestbot run` under load, measured from outside.

The bot runs as a subprocess in Slack HTTP mode against the strict Slack fake and on Discord
against its fake (REST plus a small gateway, see bench/load_fakes.py), on SQLite and/or
PostgreSQL. N channels are seeded through `digestbot import`, P papers through `digestbot
ingest`. Then, per backend:

1. a separate `digestbot ingest` of 10,000 new papers runs while a stream of mixed commands
   (search, list, settings, votes, Discord autocomplete) arrives at a set rate as real signed
   Slack requests and Discord gateway interactions; ack and first-response times are read
   from what the fakes received and when;
2. one more paper is ingested by another process and the running bot's search is polled until
   it finds it;
3. the bot is restarted with every channel due in the same minute, the fakes answering in
   50 ms; each digest's start is its first message arriving at the fake.

Finally `digestbot channels` and `digestbot cmd console:lab "/papers list"` are timed (CPU
seconds) on a fresh database with the bundled papers. Every loop is bounded in count and time.

    python -m bench.load --quick                      # smoke run, about two minutes
    python -m bench.load --replicas 3 --channels 1500 --pg-url postgresql://…/db   # see
        # bench/load_replicas.py: digests per replica, a replica killed, its shard taken over
    python -m bench.load --channels 1000 --papers 10000 --duration 60 --backend sqlite
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.load_data import (
    GUILD,
    NEEDLE,
    ROOT,
    TOPICS,
    Config,
    Result,
    channel_ids,
    corpus_source,
    export_doc,
    parse,
    write_needle,
    write_papers,
)
from bench.load_report import (
    machine,
    pct,
    report,
)
from bench.load_traffic import (
    Platforms,
    ask,
    stream,
    wait_answered,
    wait_discord,
)


def bot_env(cfg: Config, db_url: str, work: Path, **extra: str) -> dict[str, str]:
    """A clean environment: no DIGESTBOT_ setting of the caller leaks in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DIGESTBOT_", "LOAD_"))}
    env |= {
        "DIGESTBOT_DATABASE_URL": db_url,
        "DIGESTBOT_INDEX_DIR": str(work / "index"),
        "DIGESTBOT_SEMANTIC": cfg.semantic,
        "DIGESTBOT_HEALTH_PORT": "0",
        "DIGESTBOT_LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    }
    return env | extra


def digestbot_cmd(*args: str) -> list[str]:
    """The bot's command line through the launcher that can point discord.py at the fakes."""
    return [sys.executable, "-m", "bench.load_bot", *args]


def run_cli(env: dict[str, str], *args: str, timeout: float = 3600) -> tuple[float, str]:
    """Run `digestbot ARGS` to the end: (wall seconds, output). Raises on failure."""
    started = time.monotonic()
    proc = subprocess.Popen(
        digestbot_cmd(*args),
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise RuntimeError(f"digestbot {' '.join(args)} took over {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise RuntimeError(f"digestbot {' '.join(args)} failed ({proc.returncode}): {out[-2000:]}")
    return time.monotonic() - started, out


def cpu_of(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, peak RSS MB) of one finished process, from wait4's rusage."""
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[3:]} failed: {proc.stderr.read().decode()[-1000:]}")
    proc.stderr.close()
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def proc_usage(pid: int) -> tuple[float, float]:
    """(CPU seconds so far, peak RSS MB) of a running process, from /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
        hwm = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
        return cpu, int(hwm.group(1)) / 1024 if hwm else math.nan
    except (OSError, IndexError):
        return math.nan, math.nan


def fresh_postgres(url: str) -> None:
    """Drop and create the bench's own PostgreSQL database."""
    from sqlalchemy import create_engine, make_url, text

    target = make_url(url)
    admin_url = target.set(drivername="postgresql+psycopg", database="postgres")
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{target.database}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{target.database}"'))
    engine.dispose()


def embeddings_stored(db_url: str) -> str:
    """Vectors stored against papers, and which process stored them: one a paper and model
    (the key), computed by the process that claimed it (tests/runtime/test_index_work.py counts
    the computations themselves)."""
    from sqlalchemy import create_engine, func, select

    from digest.store.schema import PaperEmbeddingRow, PaperRow

    engine = create_engine(db_url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            papers = conn.scalar(select(func.count()).select_from(PaperRow))
            rows = conn.execute(
                select(PaperEmbeddingRow.created_by, func.count()).group_by(
                    PaperEmbeddingRow.created_by
                )
            ).all()
    finally:
        engine.dispose()
    by = ", ".join(f"{n:,} by pid {who.rpartition(':')[2] or '?'}" for who, n in sorted(rows))
    return f"vectors stored {sum(n for _, n in rows):,} for {papers:,} papers ({by})"


# ---------------------------------------------------------------- platforms


# ---------------------------------------------------------------- one backend


class Bot:
    """`digestbot run` as a subprocess, with its CPU and peak RSS read from /proc."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log.open("a")
        self.proc = subprocess.Popen(
            digestbot_cmd("run"),
            env=env,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.started = time.monotonic()

    def usage(self) -> tuple[float, float]:
        return proc_usage(self.proc.pid)

    def children_usage(self) -> tuple[float, float]:
        """(CPU seconds summed, largest peak RSS MB) of the bot's child processes."""
        pid = self.proc.pid
        try:
            kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            return math.nan, math.nan
        usage = [proc_usage(int(k)) for k in kids]
        if not usage:
            return 0.0, 0.0
        return sum(c for c, _ in usage), max(r for _, r in usage)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


def seed_database(cfg: Config, work: Path, db_url: str, result: Result) -> list[str]:
    """N channels through `digestbot import`, P papers through `digestbot ingest`."""
    env = bot_env(cfg, db_url, work)
    doc_path = work / "channels.json"
    started = time.monotonic()
    doc_path.write_text(json.dumps(export_doc(cfg, work)), encoding="utf-8")
    result.seed_s["channels file"] = time.monotonic() - started
    result.seed_s["import"], _ = run_cli(env, "import", str(doc_path))
    seed_file = work / "seed.jsonl"
    papers = write_papers(seed_file, cfg.papers, "lb-p", cfg.seed)
    result.seed_s["seed ingest"], _ = run_cli(env, "ingest", str(seed_file))
    return papers


def set_due(cfg: Config, db_url: str, work: Path, ready_s: float) -> tuple[datetime, float]:
    """Every channel's schedule at one minute (UTC, every day), through the command path, while
    the bot is stopped: (that minute, seconds it took). The minute is chosen after timing the
    first channels, so that setting the rest and restarting the bot end before it."""
    from bot.app import build
    from bot.commands import Context
    from bot.config import Settings
    from digest.models import ChannelRef

    refs = [
        ChannelRef(plat, cid, "T1" if plat == "slack" else GUILD)
        for plat, ids in channel_ids(cfg).items()
        for cid in ids
    ]
    started = time.monotonic()
    app = build(
        db_url, Settings(index_dir=str(work / "index"), database_url=db_url, semantic="off")
    )

    def schedule(ref: ChannelRef, at: str) -> None:
        reply = app.commands.handle(f"schedule {at} UTC daily", Context(ref, "U1"))
        if reply.error:
            raise RuntimeError(f"schedule refused for {ref.channel_id}: {reply.text}")

    try:
        probe = refs[: max(20, len(refs) // 100)]
        t = time.monotonic()
        for ref in probe:
            schedule(ref, "23:59")  # provisional: set again below
        each = (time.monotonic() - t) / len(probe)
        lead = each * len(refs) * 1.5 + ready_s * 1.5 + 90
        due = (datetime.now(UTC) + timedelta(seconds=lead)).replace(second=0, microsecond=0)
        due += timedelta(minutes=1)
        for ref in refs:
            schedule(ref, f"{due:%H:%M}")
    finally:
        app.close()
    return due, time.monotonic() - started


async def run_backend(cfg: Config, backend: str, work: Path) -> Result:
    """Seed, load, probe and restart one backend; see the module docstring."""
    result = Result(backend)
    work.mkdir(parents=True, exist_ok=True)
    if backend == "postgres":
        fresh_postgres(cfg.pg_url)
        db_url = cfg.pg_url
    else:
        db_url = f"sqlite:///{work / 'load.db'}"
    papers = seed_database(cfg, work, db_url, result)
    channels = channel_ids(cfg)
    ingest_file = work / "ingest.jsonl"
    write_papers(ingest_file, cfg.ingest, "lb-new", cfg.seed)
    needle_file = work / "needle.jsonl"
    known = write_needle(needle_file, [work / "seed.jsonl", ingest_file])

    async with Platforms(cfg, channels) as pf:
        env = bot_env(cfg, db_url, work, **pf.env())
        bot = Bot(env, work / "bot.log")
        try:
            ready, _ = await ask(pf, "help", cfg.ready_timeout)
            await wait_discord(pf, cfg.ready_timeout)
            result.ready_s = time.monotonic() - bot.started
            if ready is None:
                raise RuntimeError(f"the bot did not answer within {cfg.ready_timeout:.0f} s")
            first, _ = await ask(pf, f"search {TOPICS[1]}", cfg.ready_timeout)
            result.first_search_s = first if first is not None else math.nan
            # 1. the ingest and the command stream, together
            ingest = subprocess.Popen(
                digestbot_cmd("ingest", str(ingest_file)),
                env=bot_env(cfg, db_url, work),
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            ingest_started = time.monotonic()
            count = max(1, int(cfg.rate * cfg.duration))
            result.samples = await stream(pf, cfg, papers, count)
            await wait_answered(pf, result.samples, cfg.grace)
            while ingest.poll() is None and time.monotonic() - ingest_started < 3600:
                await asyncio.sleep(0.5)
            if ingest.poll() is None:
                ingest.kill()
                result.notes.append("the ingest did not finish within an hour")
            result.ingest_rc = ingest.wait()
            result.ingest_s = time.monotonic() - ingest_started
            # 2. a paper stored by another process: when does the running bot find it?
            run_cli(bot_env(cfg, db_url, work), "ingest", str(needle_file))
            stored = time.monotonic()
            # by a new word (needs the new vocabulary) and by words the index already knows
            probes = {"new word": f"search {NEEDLE}", "known words": f"search {known}"}
            while probes and time.monotonic() - stored < cfg.visible_timeout:
                for name, text in list(probes.items()):
                    _, reply = await ask(pf, text, 30)
                    if f"{NEEDLE} effect" in reply:  # its title; the query alone never has both
                        result.visible[name] = time.monotonic() - stored
                        del probes[name]
                await asyncio.sleep(2)
            result.cpu_s, result.rss_mb = bot.usage()
            result.child_cpu_s, result.child_rss_mb = bot.children_usage()
        finally:
            rc = bot.stop()
        if cfg.semantic != "off":
            result.notes.append(embeddings_stored(db_url))
        errors = sum(
            1 for line in (work / "bot.log").open() if line.startswith(("ERROR", "CRITICAL"))
        )
        if errors:
            result.notes.append(f"{errors} ERROR lines in {work / 'bot.log'}")
        if rc not in (0, None):
            result.notes.append(f"the bot exited with {rc} (see {work / 'bot.log'})")
        # 3. every channel due in the same minute, the platforms answering in cfg.latency s
        for fake in (pf.slack, pf.discord):
            if fake:
                fake.first_post.clear()
                fake.clear_calls()
        if cfg.due_phase:
            result.due = await due_minute(cfg, pf, db_url, work, env, result.ready_s)
    return result


async def due_minute(
    cfg: Config, pf: Platforms, db_url: str, work: Path, env: dict[str, str], ready_s: float
) -> dict:
    """Restart the bot with all channels due in one minute; when did each digest start?"""
    due, set_s = set_due(cfg, db_url, work, ready_s)
    pf.set_latency(cfg.latency)
    bot = Bot(env, work / "bot.log")
    try:
        await ask(pf, "help", cfg.ready_timeout)
        restart_s = time.monotonic() - bot.started
        due_mono = time.monotonic() + (due - datetime.now(UTC)).total_seconds()
        started = {}
        while time.monotonic() < due_mono + cfg.due_window:
            started = {
                **(pf.slack.first_post if pf.slack else {}),
                **(pf.discord.first_post if pf.discord else {}),
            }
            if len(started) >= cfg.channels:
                break
            await asyncio.sleep(1)
        cpu, rss = bot.usage()
    finally:
        bot.stop()
        pf.set_latency(0.0)
    lags = sorted(t - due_mono for t in started.values())
    return {
        "due": due.strftime("%H:%M"),
        "set_s": set_s,
        "restart_s": restart_s,
        "started": len(lags),
        "on_time": sum(1 for x in lags if x <= 60),
        "p50": pct(lags, 50),
        "max": max(lags, default=math.nan),
        "early": sum(1 for x in lags if x < 0),
        "cpu_s": cpu,
        "rss_mb": rss,
    }


# ---------------------------------------------------------------- the CLI costs


def cli_costs(cfg: Config, work: Path, repeat: int = 3) -> list[tuple[str, float, float]]:
    """`digestbot channels` and `cmd console:lab "/papers list"` on the bundled papers: median
    CPU seconds and peak RSS of ``repeat`` runs, semantic setting left at its default."""
    from digest import BUNDLED_PAPERS

    work.mkdir(parents=True, exist_ok=True)
    env = bot_env(cfg, f"sqlite:///{work / 'cli.db'}", work)
    del env["DIGESTBOT_SEMANTIC"]  # the default (auto): the extra loads when installed
    run_cli(env, "ingest", str(BUNDLED_PAPERS))
    run_cli(env, "cmd", "console:lab", "/papers subscribe diffusion models")
    out = []
    for name, args in (
        ("digestbot channels", ["channels"]),
        ('digestbot cmd console:lab "/papers list"', ["cmd", "console:lab", "/papers list"]),
    ):
        runs = [cpu_of(digestbot_cmd(*args), env) for _ in range(repeat)]
        cpu = sorted(r[0] for r in runs)[len(runs) // 2]
        out.append((name, cpu, max(r[1] for r in runs)))
    return out


# ---------------------------------------------------------------- the tables


async def run(cfg: Config) -> tuple[list[Result], list[tuple[str, float, float]]]:
    """Every backend in turn, then the command-line costs."""
    work = cfg.workdir or Path(tempfile.mkdtemp(prefix="digestbot-load-"))
    try:
        results = []
        for backend in cfg.backends:
            try:
                results.append(await run_backend(cfg, backend, work / backend))
            except Exception as exc:  # report the other backends all the same
                results.append(Result(backend, notes=[f"failed: {type(exc).__name__}: {exc}"]))
            # each backend's tables as soon as it is done: a long run interrupted keeps them
            print(report(cfg, results[-1:], []), "\n", file=sys.stderr, flush=True)
        cli = cli_costs(cfg, work / "cli") if cfg.cli else []
    finally:
        if cfg.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    return results, cli


def main(argv: list[str] | None = None) -> None:
    cfg = parse(argv)
    started = time.monotonic()
    before = machine()
    if cfg.replicas:
        from bench.load_replicas import report as replicas_report
        from bench.load_replicas import run_replicas

        work = cfg.workdir or Path(tempfile.mkdtemp(prefix="digestbot-replicas-"))
        result = asyncio.run(run_replicas(cfg, work))
        print(
            f"Replicas bench, {before}; {time.monotonic() - started:.0f} s in all; "
            f"at the end: {machine()}\n"
        )
        print(replicas_report(result))
        if cfg.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
        return
    results, cli = asyncio.run(run(cfg))
    print(
        f"Load bench, {before}; {cfg.channels:,} channels, {cfg.papers:,} papers stored, "
        f"{cfg.ingest:,}-paper ingest, {cfg.rate:g} commands/s for {cfg.duration:g} s, "
        f"semantic {cfg.semantic}; papers {corpus_source()}; {time.monotonic() - started:.0f} s in all; "
        f"at the end: {machine()}\n"
    )
    print(report(cfg, results, cli))


if __name__ == "__main__":
    main()
