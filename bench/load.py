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
    python -m bench.load --channels 1000 --papers 10000 --duration 60 --backend sqlite
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import os
import platform
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode

import httpx
import numpy as np
from slack_sdk.signature import SignatureVerifier

from bench.load_fakes import FakeGateway, TimedDiscord, TimedSlack

ROOT = Path(__file__).resolve().parents[1]
EVAL_PAPERS = (
    Path(os.environ.get("DIGESTBOT_EVAL_DIR", ROOT.parent / "shared" / "eval" / "neurips2023"))
    / "papers.jsonl"
)
SECRET = "load-bench-secret"
TOPICS = ["diffusion models", "graph neural networks", "reinforcement learning",
          "large language models", "federated learning", "sparse autoencoders",
          "contrastive learning", "bayesian optimization"]  # fmt: skip
NEEDLE = "quorbliflex"  # a word no generated paper contains (the visibility probe)
GUILD = "77"
SLOW = 3.0  # Slack's and Discord's deadline for the first answer
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


@dataclass
class Config:
    """What one bench run does (sizes, rate, where)."""

    channels: int = 1000
    papers: int = 10_000
    ingest: int = 10_000
    rate: float = 4.0
    duration: float = 60.0
    backends: tuple[str, ...] = ("sqlite",)
    platforms: tuple[str, ...] = ("slack", "discord")
    pg_url: str = "postgresql://postgres@127.0.0.1:5432/load_bench"
    semantic: str = "off"
    grace: float = 30.0  # seconds after the last command for late answers
    ready_timeout: float = 900.0  # start-up plus the first search (index fit) may take this long
    visible_timeout: float = 120.0
    due_window: float = 180.0  # seconds after the due minute the digests are watched
    latency: float = 0.05  # the fakes' answer time while digests are due
    cli: bool = True
    due_phase: bool = True  # the restart with every channel due in one minute
    workdir: Path | None = None
    seed: int = 21


@dataclass
class Sample:
    """One command sent: when, and when the platform saw the ack and the first answer."""

    platform: str
    kind: str
    sent: float
    ack: float | None = None
    answered: float | None = None
    key: str = ""  # Slack: response-url method; Discord: interaction token


@dataclass
class Result:
    """Everything measured for one backend."""

    backend: str
    samples: list[Sample] = field(default_factory=list)
    ready_s: float = math.nan
    first_search_s: float = math.nan
    seed_s: dict[str, float] = field(default_factory=dict)
    ingest_s: float = math.nan
    ingest_rc: int | None = None
    visible: dict[str, float] = field(default_factory=dict)  # probe -> seconds to found
    cpu_s: float = math.nan
    rss_mb: float = math.nan
    due: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- data


def sentences_and_titles() -> tuple[list[str], list[str]]:
    """Sentences and titles to recombine: the NeurIPS 2023 set when present, else the bundled list."""
    if EVAL_PAPERS.exists():
        rows = [json.loads(line) for line in EVAL_PAPERS.open()]
        pairs = [(r["title"], r["abstract"]) for r in rows]
    else:
        from digest import BUNDLED_PAPERS
        from digest.ingest.parse import parse_neurips_list

        parsed = parse_neurips_list(BUNDLED_PAPERS.read_text(encoding="utf-8"))
        pairs = [(r.title, r.abstract) for r in parsed.records]
    sentences = [s for _, a in pairs for s in re.split(r"(?<=\.)\s+", a) if len(s) > 30]
    return sentences, [t for t, _ in pairs]


def write_papers(path: Path, n: int, prefix: str, seed: int) -> list[str]:
    """``n`` synthetic papers as JSON lines (deterministic); returns their ids."""
    sentences, titles = sentences_and_titles()
    rng = random.Random(f"{seed}-{prefix}")
    ids = []
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            pid = f"{prefix}{i}"
            words = rng.choice(titles).split()
            cut = rng.randint(1, max(1, len(words) - 1))
            title = " ".join(words[:cut] + rng.choice(titles).split()[cut:]) + f" ({prefix}{i})"
            abstract = " ".join(rng.sample(sentences, min(len(sentences), rng.randint(5, 9))))
            row = {"id": pid, "title": title, "abstract": abstract, "venue": "Bench 2026",
                   "year": 2026, "authors": [f"Author {rng.randint(1, 5000)}"]}  # fmt: skip
            out.write(json.dumps(row) + "\n")
            ids.append(pid)
    return ids


def write_needle(path: Path, seed_file: Path) -> str:
    """One paper only the visibility probes look for: its title holds a word no other paper has
    and the words of the first seeded paper's title; returns that title (the second probe)."""
    first = json.loads(seed_file.open(encoding="utf-8").readline())
    known = " ".join(re.sub(r"[^\w\s-]", " ", first["title"].rsplit(" (", 1)[0]).split())
    row = {"id": "needle-1", "title": f"The {NEEDLE} effect: {known}",
           "abstract": f"We describe the {NEEDLE} effect. {first['abstract']}", "year": 2026}  # fmt: skip
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return known


def channel_ids(cfg: Config) -> dict[str, list[str]]:
    """The seeded channels, split evenly between the platforms run."""
    out: dict[str, list[str]] = {p: [] for p in cfg.platforms}
    for i in range(cfg.channels):
        p = cfg.platforms[i % len(cfg.platforms)]
        out[p].append(f"C{i:07d}" if p == "slack" else str(5_000_000 + i))
    return out


def not_today() -> str:
    """A weekday that is not today (UTC): nothing is due or caught up while commands run."""
    return WEEKDAYS[(datetime.now(UTC).weekday() + 1) % 7]


def export_doc(cfg: Config, work: Path) -> dict:
    """An export of N channels, each row copied from one channel the code itself created, so
    every column (present or added later) holds what the code would store."""
    from bot.app import build
    from bot.config import Settings
    from digest.models import ChannelRef, SubscriptionKind
    from digest.portable import export_state

    url = f"sqlite:///{work / 'template.db'}"
    app = build(url, Settings(index_dir=str(work / "template-index"), database_url=url))
    try:
        ref = ChannelRef("slack", "CTEMPLATE", "T1")
        app.channels.add(ref, SubscriptionKind.TOPIC, TOPICS[0])
        # schedule via the command path, so any column it maintains is set as it would be
        from bot.commands import Context

        app.commands.handle(f"schedule 09:00 UTC {not_today()}", Context(ref, "U1"))
        doc = export_state(app.store)
    finally:
        app.close()
    (chan,), (sub,) = doc["channels"], doc["subscriptions"]
    doc["channels"], doc["subscriptions"] = [], []
    n = 0
    for plat, ids in channel_ids(cfg).items():
        for cid in ids:
            n += 1
            ws = "T1" if plat == "slack" else GUILD
            doc["channels"].append({**chan, "id": n, "platform": plat, "workspace": ws,
                                    "channel_id": cid, "name": f"bench-{n}"})  # fmt: skip
            doc["subscriptions"].append(
                {**sub, "id": n, "channel_id": n, "text": TOPICS[n % len(TOPICS)]}
            )
    return doc


# ---------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    proc = subprocess.Popen(digestbot_cmd(*args), env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
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
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
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


# ---------------------------------------------------------------- platforms


class Platforms:
    """The fakes, and real platform requests sent to the running bot."""

    def __init__(self, cfg: Config, channels: dict[str, list[str]]) -> None:
        self.cfg, self.channels = cfg, channels
        self.slack = TimedSlack() if "slack" in cfg.platforms else None
        self.discord = TimedDiscord() if "discord" in cfg.platforms else None
        self.gateway = FakeGateway() if self.discord else None
        self.port = free_port()
        self.http: httpx.AsyncClient | None = None
        self.n = 0
        self.signer = SignatureVerifier(SECRET)

    async def __aenter__(self) -> Platforms:
        if self.slack:
            self.slack.__enter__()
            self.slack.join(*self.channels["slack"])
        if self.discord:
            self.discord.__enter__()
            self.discord.channels.update(self.channels["discord"])
            self.discord.gateway_url = await self.gateway.start()
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
        self.http = httpx.AsyncClient(timeout=30, limits=limits)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.aclose()
        if self.gateway:
            await self.gateway.stop()
        for fake in (self.slack, self.discord):
            if fake:
                fake.__exit__(None, None, None)

    def env(self) -> dict[str, str]:
        """The bot's settings that point it at the fakes."""
        env: dict[str, str] = {}
        if self.slack:
            env |= {"DIGESTBOT_SLACK_BOT_TOKEN": "xoxb-load", "DIGESTBOT_SLACK_SIGNING_SECRET": SECRET,
                    "DIGESTBOT_SLACK_API_URL": self.slack.url, "DIGESTBOT_SLACK_HOST": "127.0.0.1",
                    "DIGESTBOT_SLACK_PORT": str(self.port)}  # fmt: skip
        if self.discord:
            env |= {"DIGESTBOT_DISCORD_TOKEN": "load-token", "LOAD_DISCORD_REST": self.discord.base,
                    "LOAD_DISCORD_GATEWAY": self.gateway.url}  # fmt: skip
        return env

    def set_latency(self, seconds: float) -> None:
        if self.slack:
            self.slack.latency = seconds
        if self.discord:
            self.discord.latency = seconds

    # Slack: signed slash commands to the bot's HTTP endpoint, answers at response URLs.

    async def slack_command(self, text: str, channel: str, kind: str) -> Sample:
        """POST one signed `/papers TEXT`; the ack is the HTTP answer, the first response the
        response-URL call the fake receives."""
        self.n += 1
        key = f"resp-{self.n}"
        form = {"command": "/papers", "text": text, "team_id": "T1", "channel_id": channel,
                "user_id": "U1", "user_name": "ann", "response_url": f"{self.slack.url}{key}",
                "trigger_id": f"trig-{self.n}"}  # fmt: skip
        body = urlencode(form)
        ts = str(int(time.time()))
        headers = {"X-Slack-Request-Timestamp": ts, "Content-Type": "application/x-www-form-urlencoded",
                   "X-Slack-Signature": self.signer.generate_signature(timestamp=ts, body=body)}  # fmt: skip
        sample = Sample("slack", kind, time.monotonic(), key=key)
        try:
            resp = await self.http.post(
                f"http://127.0.0.1:{self.port}/slack/events", content=body, headers=headers
            )
            if resp.status_code == 200:
                sample.ack = time.monotonic()
        except httpx.HTTPError:
            pass  # no ack: counted as unanswered
        return sample

    def slack_reply(self, key: str) -> str:
        """What arrived at one response URL (empty when nothing did)."""
        return next((json.dumps(a) for m, a in list(self.slack.calls) if m == key), "")

    # Discord: interactions sent over the gateway, answers at the interaction endpoints.

    async def discord_interaction(self, payload: dict, kind: str) -> Sample:
        sample = Sample("discord", kind, time.monotonic(), key=payload["token"])
        await self.gateway.dispatch("INTERACTION_CREATE", payload)
        return sample

    def discord_reply(self, token: str) -> str:
        bodies = [*self.discord.acks.get(token, []), *self.discord.followups.get(token, []),
                  *self.discord.edits.get(token, [])]  # fmt: skip
        return json.dumps(bodies)

    def settle(self, s: Sample) -> None:
        """Fill in the Discord times, and the Slack first response, from what the fakes saw."""
        if s.platform == "slack":
            s.answered = self.slack.first.get(s.key)
        else:
            s.ack = self.discord.acked.get(s.key)
            s.answered = self.discord.answered.get(s.key)

    def pending(self, samples: list[Sample]) -> int:
        for s in samples:
            self.settle(s)
        return sum(1 for s in samples if s.answered is None)


def slack_text(kind: str, rng: random.Random, papers: list[str]) -> str:
    """A `/papers` command line of the given kind."""
    if kind == "search":
        return f"search {rng.choice(TOPICS)}"
    if kind == "list":
        return "list"
    if kind == "settings":
        return rng.choice([f"size {rng.randint(3, 10)}", f"threshold 0.{rng.randint(1, 5)}",
                           f"schedule 09:{rng.randint(10, 59)} UTC {not_today()}",
                           f"subscribe {rng.choice(TOPICS)}", "option quiet off"])  # fmt: skip
    return f"{rng.choice(['up', 'down'])} {rng.choice(papers)}"


def discord_payload(kind: str, rng: random.Random, papers: list[str], channel: str, n: int) -> dict:
    """An INTERACTION_CREATE payload of the given kind, as tests/discord_interactions builds."""
    from tests.discord_interactions import autocomplete, slash

    token = f"load-{n}"
    where = {"channel": channel, "guild": GUILD}
    if kind == "search":
        return slash("search", token, query=rng.choice(TOPICS), **where)
    if kind == "list":
        return slash("list", token, **where)
    if kind == "settings":
        choice = rng.randint(0, 3)
        if choice == 0:
            return slash("size", token, n=rng.randint(3, 10), **where)
        if choice == 1:
            return slash("threshold", token, value=rng.randint(1, 5) / 10, **where)
        if choice == 2:
            return slash("schedule", token, time=f"09:{rng.randint(10, 59)}", timezone="UTC",
                         days=not_today(), **where)  # fmt: skip
        return slash("subscribe", token, text=rng.choice(TOPICS), **where)
    if kind == "autocomplete":
        p = autocomplete("up", token, "paper", rng.choice(TOPICS).split()[0])
        p["channel_id"] = p["channel"]["id"] = channel
        return p
    return slash(rng.choice(["up", "down"]), token, paper=rng.choice(papers), **where)


#: The mix of commands: kind -> weight, per platform.
MIX = {
    "slack": {"search": 3, "list": 2, "settings": 3, "vote": 2},
    "discord": {"search": 2, "list": 2, "settings": 3, "vote": 1, "autocomplete": 2},
}


async def stream(pf: Platforms, cfg: Config, papers: list[str], count: int) -> list[Sample]:
    """``count`` commands at ``cfg.rate`` a second, alternating platforms, each sent on time
    whether or not earlier ones were answered (an open loop, as users do)."""
    rng = random.Random(cfg.seed)
    tasks: list[asyncio.Task] = []
    start = time.monotonic()
    platforms = itertools.cycle(cfg.platforms)
    for k in range(count):
        await asyncio.sleep(max(0.0, start + k / cfg.rate - time.monotonic()))
        plat = next(platforms)
        kinds, weights = zip(*MIX[plat].items(), strict=True)
        kind = rng.choices(kinds, weights)[0]
        channel = rng.choice(pf.channels[plat])
        if plat == "slack":
            tasks.append(asyncio.create_task(
                pf.slack_command(slack_text(kind, rng, papers), channel, kind)
            ))  # fmt: skip
        else:
            payload = discord_payload(kind, rng, papers, channel, k)
            tasks.append(asyncio.create_task(pf.discord_interaction(payload, kind)))
    return list(await asyncio.gather(*tasks))


async def wait_answered(pf: Platforms, samples: list[Sample], timeout: float) -> None:
    end = time.monotonic() + timeout
    while pf.pending(samples) and time.monotonic() < end:
        await asyncio.sleep(0.25)


# ---------------------------------------------------------------- one backend


class Bot:
    """`digestbot run` as a subprocess, with its CPU and peak RSS read from /proc."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log.open("a")
        self.proc = subprocess.Popen(digestbot_cmd("run"), env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=subprocess.STDOUT)  # fmt: skip
        self.started = time.monotonic()

    def usage(self) -> tuple[float, float]:
        return proc_usage(self.proc.pid)

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


async def ask(pf: Platforms, text: str, timeout: float) -> tuple[float | None, str]:
    """One command on the first platform run, waited for: (seconds to its answer, answer text)."""
    started = time.monotonic()
    end = started + timeout
    while time.monotonic() < end:
        if pf.slack:
            s = await pf.slack_command(text, pf.channels["slack"][0], "probe")
            if s.ack is None:  # not listening yet
                await asyncio.sleep(0.5)
                continue
        else:
            if not pf.gateway.sockets:
                await asyncio.sleep(0.5)
                continue
            verb, _, rest = text.partition(" ")
            from tests.discord_interactions import slash

            values = {"query": rest} if verb == "search" else {}
            payload = slash(verb, f"probe-{time.monotonic_ns()}", channel=pf.channels["discord"][0],
                            guild=GUILD, **values)  # fmt: skip
            s = await pf.discord_interaction(payload, "probe")
        while time.monotonic() < end:
            pf.settle(s)
            if s.answered is not None:
                reply = pf.slack_reply(s.key) if s.platform == "slack" else pf.discord_reply(s.key)
                return time.monotonic() - started, reply
            if s.platform == "discord" and s.ack is None and time.monotonic() - s.sent > SLOW + 1:
                break  # Discord refused a late ack: ask again
            await asyncio.sleep(0.2)
    return None, ""


async def wait_discord(pf: Platforms, timeout: float) -> None:
    end = time.monotonic() + timeout
    while pf.discord and not pf.gateway.identified and time.monotonic() < end:
        await asyncio.sleep(0.2)


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

    refs = [ChannelRef(plat, cid, "T1" if plat == "slack" else GUILD)
            for plat, ids in channel_ids(cfg).items() for cid in ids]  # fmt: skip
    started = time.monotonic()
    app = build(db_url, Settings(index_dir=str(work / "index"), database_url=db_url,
                                 semantic="off"))  # fmt: skip

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
    known = write_needle(needle_file, work / "seed.jsonl")

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
            ingest = subprocess.Popen(digestbot_cmd("ingest", str(ingest_file)), env=bot_env(cfg, db_url, work),
                                      cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)  # fmt: skip
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
        finally:
            rc = bot.stop()
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
            started = {**(pf.slack.first_post if pf.slack else {}),
                       **(pf.discord.first_post if pf.discord else {})}  # fmt: skip
            if len(started) >= cfg.channels:
                break
            await asyncio.sleep(1)
        cpu, rss = bot.usage()
    finally:
        bot.stop()
        pf.set_latency(0.0)
    lags = sorted(t - due_mono for t in started.values())
    return {"due": due.strftime("%H:%M"), "set_s": set_s, "restart_s": restart_s,
            "started": len(lags),
            "on_time": sum(1 for x in lags if x <= 60), "p50": pct(lags, 50), "max": max(lags, default=math.nan),
            "early": sum(1 for x in lags if x < 0), "cpu_s": cpu, "rss_mb": rss}  # fmt: skip


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
    for name, args in (("digestbot channels", ["channels"]),
                       ('digestbot cmd console:lab "/papers list"', ["cmd", "console:lab", "/papers list"])):  # fmt: skip
        runs = [cpu_of(digestbot_cmd(*args), env) for _ in range(repeat)]
        cpu = sorted(r[0] for r in runs)[len(runs) // 2]
        out.append((name, cpu, max(r[1] for r in runs)))
    return out


# ---------------------------------------------------------------- the tables


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
            slow = sum(1 for s in ss if s.ack is None or s.answered is None
                       or s.ack - s.sent >= SLOW or s.answered - s.sent >= SLOW)  # fmt: skip
            unanswered = sum(1 for s in ss if s.ack is None or s.answered is None)
            rows.append([r.backend, plat, str(len(ss)),
                         *(fmt(pct(acks, q) * 1000) for q in (50, 99)), fmt(max(acks, default=math.nan)),
                         *(fmt(pct(firsts, q) * 1000) for q in (50, 99)), fmt(max(firsts, default=math.nan)),
                         str(slow), str(unanswered)])  # fmt: skip
    return rows


def backend_rows(results: list[Result], cfg: Config) -> list[list[str]]:
    rows = []
    for r in results:
        d = r.due
        rows.append([r.backend, fmt(r.ready_s), fmt(r.first_search_s), fmt(r.ingest_s) + ("" if r.ingest_rc == 0 else f" (rc {r.ingest_rc})"),
                     *(fmt(r.visible[k]) if k in r.visible else f"not in {cfg.visible_timeout:.0f}"
                       for k in ("known words", "new word")),
                     f"{d.get('on_time', 0):,} / {cfg.channels:,}", fmt(d.get("p50")), fmt(d.get("max")),
                     fmt(r.cpu_s), fmt(r.rss_mb)])  # fmt: skip
    return rows


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


COMMAND_HEADER = ["backend", "platform", "commands", "ack p50 ms", "ack p99 ms", "ack max s",
                  "first response p50 ms", "p99 ms", "max s", "≥ 3 s", "unanswered"]  # fmt: skip
BACKEND_HEADER = ["backend", "bot ready s", "first search s", "ingest s", "new paper found s (its words)",
                  "(a new word)",
                  "digests started ≤ 60 s", "start lag p50 s", "max s", "bot CPU s (phase 1)",
                  "bot peak RSS MB"]  # fmt: skip


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
        parts.append(f"\n{r.backend}: seeding {seeds}; due {d.get('due')} UTC: schedules set in "
                     f"{fmt(d.get('set_s'))} s, restart answered after {fmt(d.get('restart_s'))} s, "
                     f"{d.get('started', 0):,} digests started in the window ({d.get('early', 0)} early), "
                     f"bot CPU {fmt(d.get('cpu_s'))} s, peak RSS {fmt(d.get('rss_mb'))} MB"
                     + "".join(f"; {n}" for n in r.notes))  # fmt: skip
    if cli:
        parts += ["", table(["command (19 bundled papers, semantic default)", "CPU s (median of 3)", "peak RSS MB"],
                            [[n, fmt(c), fmt(m)] for n, c, m in cli])]  # fmt: skip
    return "\n".join(parts)


def machine() -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, load average {load}")  # fmt: skip


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


def parse(argv: list[str] | None = None) -> Config:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--channels", type=int, default=1000)
    p.add_argument("--papers", type=int, default=10_000, help="papers stored before the run")
    p.add_argument("--ingest", type=int, default=10_000, help="papers the concurrent ingest adds")
    p.add_argument("--rate", type=float, default=4.0, help="commands a second")
    p.add_argument("--duration", type=float, default=60.0, help="seconds of commands")
    p.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="sqlite")
    p.add_argument("--platform", choices=("slack", "discord", "both"), default="both")
    p.add_argument("--pg-url", default=Config.pg_url)
    p.add_argument("--semantic", default="off", help="DIGESTBOT_SEMANTIC for the bot and ingests")
    p.add_argument("--no-cli", action="store_true", help="skip the command-line CPU table")
    p.add_argument("--workdir", type=Path, help="keep databases and logs here")
    p.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    a = p.parse_args(argv)
    cfg = Config(channels=a.channels, papers=a.papers, ingest=a.ingest, rate=a.rate,
                 duration=a.duration, pg_url=a.pg_url, semantic=a.semantic, cli=not a.no_cli,
                 workdir=a.workdir,
                 backends=("sqlite", "postgres") if a.backend == "both" else (a.backend,),
                 platforms=("slack", "discord") if a.platform == "both" else (a.platform,))  # fmt: skip
    if a.quick:
        cfg.channels, cfg.papers, cfg.ingest, cfg.duration = 20, 300, 300, 10
        cfg.due_window = 90
    return cfg


def main(argv: list[str] | None = None) -> None:
    cfg = parse(argv)
    started = time.monotonic()
    before = machine()
    results, cli = asyncio.run(run(cfg))
    print(f"Load bench, {before}; {cfg.channels:,} channels, {cfg.papers:,} papers stored, "
          f"{cfg.ingest:,}-paper ingest, {cfg.rate:g} commands/s for {cfg.duration:g} s, "
          f"semantic {cfg.semantic}; {time.monotonic() - started:.0f} s in all; at the end: {machine()}\n")  # fmt: skip
    print(report(cfg, results, cli))


if __name__ == "__main__":
    main()
