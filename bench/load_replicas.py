"""Replicas under `bench.load --replicas N`: real `digestbot run` processes on one PostgreSQL, each
with its own index folder, Slack in HTTP mode (a port each) and Discord sharded by lease (N shards,
one token each, so the gateway fake says which replica identified which shard).

1. Seeded in process: the bundled papers and ``--channels`` channels (half Slack, half Discord
   spread over the N shards), all due at the same minute but held back (due far ahead) until
   every replica runs and every shard is served.
2. Wave 1: every channel due at the same moment (set 15 s ahead, so that each replica's timer
   fires on it, as for a digest time). Digests per replica (``deliveries.claimed_by``), each
   posted once, and each replica's CPU seconds and peak RSS, read from /proc.
3. One replica killed with SIGKILL: how long until another replica identifies its shard at the
   gateway, and (wave 2) until a digest of a channel on that shard, due after the kill, is
   posted by a survivor.
"""

from __future__ import annotations

import asyncio
import json
import math
import signal
import subprocess
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from aiohttp import WSMsgType, web

from bench.load import ROOT, bot_env, digestbot_cmd, fresh_postgres, proc_usage
from bench.load_data import TOPICS, Config
from bench.load_fakes import TimedDiscord, TimedSlack
from tests.fakes.discord import BOT

SECRET = "replicas-secret"
FAR = datetime(2099, 1, 1, tzinfo=UTC)
#: Channels per shard kept for wave 2 (due only after the kill).
LATE = 20
#: Each replica's sweep (s): short, so a wave starts within seconds of being set due.
SWEEP = 5
#: Wave 1 is due this long after it is set (s): every replica's sweep has armed its timer.
LEAD = 3 * SWEEP


@dataclass
class ReplicaResult:
    """What one replicas run measured."""

    replicas: int
    channels: int
    split: dict[str, int] = field(default_factory=dict)  # replica name -> digests posted
    duplicates: int = 0
    wave_s: float = math.nan  # wave 1: due to every digest posted
    usage: dict[str, tuple[float, float]] = field(default_factory=dict)  # CPU s, peak RSS MB
    killed: str = ""
    shard: int = -1
    taken_s: float = math.nan  # kill to another replica identifying the dead one's shard
    taken_by: str = ""
    served_s: float = math.nan  # kill to a survivor posting a digest on that shard
    late_posted: int = 0
    late_total: int = 0
    notes: list[str] = field(default_factory=list)


class ShardGateway:
    """Discord's gateway for several replicas: HELLO, READY after IDENTIFY (the shard asked for),
    heartbeat ACKs; records (time, token, shard) of every IDENTIFY and which token serves which
    shard now."""

    def __init__(self) -> None:
        self.identified: list[tuple[float, str, int]] = []
        self.open: dict[int, list[str]] = defaultdict(list)
        self.runner: web.AppRunner | None = None
        self.url = ""
        self.seq = 0

    async def start(self) -> str:
        app = web.Application()
        app.router.add_get("/", self._socket)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"ws://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/"
        return self.url

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    def serving(self) -> dict[int, list[str]]:
        return {shard: sorted(t) for shard, t in self.open.items() if t}

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None})
        mine: tuple[str, int] | None = None
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    break
                frame = json.loads(msg.data)
                if frame.get("op") == 1:
                    await ws.send_json({"op": 11, "d": None, "s": None, "t": None})
                elif frame.get("op") == 2:
                    token, (shard, count) = frame["d"]["token"], frame["d"]["shard"]
                    self.identified.append((time.monotonic(), token, shard))
                    mine = (token, shard)
                    self.open[shard].append(token)
                    self.seq += 1
                    ready = {
                        "v": 10,
                        "user": BOT,
                        "guilds": [],
                        "session_id": f"s{self.seq}",
                        "resume_gateway_url": self.url,
                        "shard": [shard, count],
                        "application": {"id": "2000", "flags": 0},
                    }
                    await ws.send_json({"op": 0, "t": "READY", "s": 1, "d": ready})
        finally:
            if mine is not None and mine[0] in self.open[mine[1]]:
                self.open[mine[1]].remove(mine[0])
        return ws


def guild_on(shard: int, count: int) -> str:
    """A guild id that Discord's rule ((id >> 22) % count) puts on ``shard``."""
    base = 1_000_000_000_000 - 1_000_000_000_000 % count
    return str(((base + shard) << 22) | 1)


def seed(db_url: str, work: Path, channels: int, count: int) -> dict[str, list]:
    """Bundled papers, ``channels`` channels (due far ahead) and ``LATE`` more per shard."""
    from sqlalchemy import insert, select

    from bot.app import build
    from bot.config import Settings
    from digest import BUNDLED_PAPERS
    from digest.store.schema import ChannelRow, SubscriptionRow

    app = build(
        db_url, Settings(index_dir=str(work / "seed-index"), database_url=db_url, semantic="off")
    )
    now = datetime.now(UTC)
    at = max(now - timedelta(minutes=2), now.replace(hour=0, minute=0)).strftime("%H:%M")
    made = now - timedelta(days=1)
    rows, plan = [], {"slack": [], "discord": [], "late": defaultdict(list)}
    on_discord = 0
    for i in range(channels + LATE * count):
        late = i >= channels
        if i % 2 == 0 and not late:
            platform, workspace, cid = "slack", "T1", f"C{i:07d}"
            plan["slack"].append(cid)
        else:
            shard, on_discord = on_discord % count, on_discord + 1
            platform, workspace, cid = "discord", guild_on(shard, count), str(5_000_000 + i)
            (plan["late"][shard] if late else plan["discord"]).append(cid)
        rows.append(
            dict(
                platform=platform,
                workspace=workspace,
                channel_id=cid,
                timezone="UTC",
                digest_time=at,
                weekdays="mon,tue,wed,thu,fri,sat,sun",
                created_at=made,
                next_due_at=FAR,
            )
        )
    try:
        app.papers.ingest(str(BUNDLED_PAPERS))
        with app.store.engine.begin() as conn:
            conn.execute(insert(ChannelRow), rows)
            ids = list(conn.scalars(select(ChannelRow.__table__.c.id)))
            subs = [
                dict(channel_id=c, kind="topic", text=TOPICS[c % len(TOPICS)], created_at=made)
                for c in ids
            ]
            conn.execute(insert(SubscriptionRow), subs)
        app.store.leases.set_shard_count("discord", count)
    finally:
        app.close()
    return plan


async def _until(check, timeout: float, every: float = 0.5) -> bool:  # noqa: ANN001
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if await asyncio.to_thread(check):
            return True
        await asyncio.sleep(every)
    return bool(await asyncio.to_thread(check))


async def run_replicas(cfg: Config, work: Path) -> ReplicaResult:
    """Start ``cfg.replicas`` replicas, run wave 1, kill one, time the take-over (wave 2)."""
    from sqlalchemy import create_engine, func, select, update

    from digest.store.schema import LOOK_NOW, ChannelRow, DeliveryRow, LeaseRow

    n = cfg.replicas
    work.mkdir(parents=True, exist_ok=True)
    fresh_postgres(cfg.pg_url)
    plan = seed(cfg.pg_url, work, cfg.channels, n)
    out = ReplicaResult(n, cfg.channels)
    out.late_total = sum(len(v) for v in plan["late"].values())
    url = cfg.pg_url.replace("postgresql://", "postgresql+psycopg://", 1)
    engine = create_engine(url)
    names = [chr(ord("a") + i) for i in range(n)]

    def posted_by() -> Counter:
        with engine.connect() as conn:
            stmt = select(DeliveryRow.claimed_by).where(DeliveryRow.status == "posted")
            return Counter(conn.scalars(stmt))

    def live() -> int:
        with engine.connect() as conn:
            stmt = select(func.count()).where(
                LeaseRow.name.startswith("replica:"), LeaseRow.until >= func.now()
            )
            return conn.scalar(stmt) or 0

    def shard_owner() -> dict[int, str]:
        with engine.connect() as conn:
            rows = conn.execute(
                select(LeaseRow.name, LeaseRow.owner).where(LeaseRow.name.like("discord:shard:%"))
            )
            return {int(name.rsplit(":", 1)[1]): owner for name, owner in rows if owner}

    slack, discord, gateway = TimedSlack(), TimedDiscord(), ShardGateway()
    slack.__enter__()
    discord.__enter__()
    procs: dict[str, subprocess.Popen] = {}
    logs = []
    try:
        slack.join(*plan["slack"])
        late_ids = [c for ids in plan["late"].values() for c in ids]
        discord.channels.update(plan["discord"] + late_ids)
        discord.gateway_url = await gateway.start()
        slack.latency = discord.latency = cfg.latency
        ports = {}
        for name in names:
            ports[name] = _free_port()
            env = bot_env(cfg, cfg.pg_url, work / name) | {
                "DIGESTBOT_SEMANTIC": "off",
                "DIGESTBOT_DELIVERY_SWEEP_SECONDS": str(SWEEP),
                "DIGESTBOT_SLACK_BOT_TOKEN": "xoxb-load",
                "DIGESTBOT_SLACK_SIGNING_SECRET": SECRET,
                "DIGESTBOT_SLACK_API_URL": slack.url,
                "DIGESTBOT_SLACK_HOST": "127.0.0.1",
                "DIGESTBOT_SLACK_PORT": str(ports[name]),
                "DIGESTBOT_DISCORD_TOKEN": f"token-{name}",
                "LOAD_DISCORD_REST": discord.base,
                "LOAD_DISCORD_GATEWAY": gateway.url,
            }
            (work / name).mkdir(exist_ok=True)
            log = (work / f"{name}.log").open("w")
            logs.append(log)
            procs[name] = subprocess.Popen(
                digestbot_cmd("run"),
                env=env,
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        started = time.monotonic()
        bases = [f"http://127.0.0.1:{p}" for p in ports.values()]
        if not await _until(lambda: all(_up(b) for b in bases), cfg.ready_timeout):
            raise RuntimeError(f"a replica did not start (logs in {work})")
        if not await _until(lambda: live() == n, 120):
            raise RuntimeError(f"{live()} of {n} replicas live after 120 s")
        # every shard served, each by one replica
        if not await _until(lambda: len(gateway.serving()) == n, 180):
            raise RuntimeError(f"shards served: {gateway.serving()}")
        out.notes.append(
            f"all {n} replicas up and every shard served after {time.monotonic() - started:.0f} s"
        )
        # wave 1: every channel but the late ones due in the same minute, a little ahead: each
        # replica's sweep arms its timer on it, as for a digest time set in advance
        late_set = set(late_ids)
        with engine.begin() as conn:
            conn.execute(
                update(ChannelRow)
                .where(ChannelRow.channel_id.not_in(late_set))
                .values(next_due_at=datetime.now(UTC) + timedelta(seconds=LEAD))
            )
        due_at = time.monotonic() + LEAD
        if not await _until(lambda: sum(posted_by().values()) >= cfg.channels, 600, 1.0):
            out.notes.append(f"wave 1: {sum(posted_by().values())} of {cfg.channels} posted")
        out.wave_s = time.monotonic() - due_at
        await asyncio.sleep(SWEEP * 2)  # more sweeps: room for a late duplicate to show
        owners = shard_owner()
        token_of = {s: tokens[0].removeprefix("token-") for s, tokens in gateway.serving().items()}
        worker_name = {owners[s]: token_of[s] for s in owners if s in token_of}
        split = posted_by()
        out.split = {worker_name.get(w, w[-6:]): c for w, c in sorted(split.items())}
        out.duplicates = sum(len(v) - 1 for v in _headers(slack, discord).values() if len(v) > 1)
        out.usage = {name: proc_usage(p.pid) for name, p in procs.items()}
        # the kill: the replica serving the last shard
        out.shard = n - 1
        out.killed = token_of.get(out.shard, names[-1])
        victim = procs[out.killed]
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        killed_at = time.monotonic()

        def taken() -> bool:
            return any(
                t > killed_at and s == out.shard and tok != f"token-{out.killed}"
                for t, tok, s in gateway.identified
            )

        if await _until(taken, 300, 0.5):
            when, tok = next(
                (t, tok)
                for t, tok, s in gateway.identified
                if t > killed_at and s == out.shard and tok != f"token-{out.killed}"
            )
            out.taken_s, out.taken_by = when - killed_at, tok.removeprefix("token-")
        # wave 2: the late channels (every shard's) due now; those on the dead shard must be
        # posted by the replica that took it over
        with engine.begin() as conn:
            conn.execute(
                update(ChannelRow)
                .where(ChannelRow.channel_id.in_(late_set))
                .values(next_due_at=LOOK_NOW)
            )
        dead = set(plan["late"][out.shard])

        def served() -> bool:
            return bool(dead & set(discord.first_post))

        if await _until(served, 300, 0.5):
            first = min(discord.first_post[c] for c in dead if c in discord.first_post)
            out.served_s = first - killed_at
        await _until(lambda: len(late_set & set(discord.first_post)) >= len(late_set), 120, 1.0)
        out.late_posted = len(late_set & set(discord.first_post))
        for name, p in procs.items():
            if name != out.killed:
                out.usage[name + " (end)"] = proc_usage(p.pid)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs.values():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for log in logs:
            log.close()
        await gateway.stop()
        slack.__exit__(None, None, None)
        discord.__exit__(None, None, None)
        engine.dispose()
    return out


def _headers(slack: TimedSlack, discord: TimedDiscord) -> dict[str, list[str]]:
    """Each channel's digest headers (message 0): more than one is a duplicate digest."""
    out: dict[str, list[str]] = defaultdict(list)
    for channel in list(slack.first_post):
        for m in slack.arrived(channel):
            key = (m.get("metadata") or {}).get("event_payload", {}).get("key", "")
            if key.endswith("#0"):
                out[channel].append(key)
    return out


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _up(base: str) -> bool:
    try:
        httpx.get(f"{base}/slack/events", timeout=2)
        return True
    except httpx.TransportError:
        return False


def report(r: ReplicaResult) -> str:
    """The replicas tables (markdown)."""
    even = r.channels / max(1, r.replicas)
    lo, hi = (min(r.split.values()), max(r.split.values())) if r.split else (0, 0)
    fair = "yes" if r.split and even / 1.5 <= lo and hi <= even * 1.5 else "no"
    lines = [
        f"### {r.replicas} replicas on PostgreSQL, {r.channels:,} channels due at once",
        "",
        "| replica | digests posted (wave 1) | CPU s | peak RSS MB |",
        "|---|---|---|---|",
    ]
    for name in sorted(k for k in r.usage if " " not in k):
        cpu, rss = r.usage[name]
        lines.append(f"| {name} | {r.split.get(name, 0):,} | {cpu:.1f} | {rss:.0f} |")
    lines += [
        "",
        f"Split {sorted(r.split.values())} (even {even:.0f}; within 1.5×: {fair}); "
        f"duplicate Slack headers {r.duplicates}; wave 1 all posted in {r.wave_s:.1f} s.",
        f"Killed (SIGKILL): replica {r.killed}, serving shard {r.shard}; the shard identified "
        f"again by replica {r.taken_by or '–'} after **{r.taken_s:.1f} s**; a digest of a channel "
        f"on it, due after the kill, posted after **{r.served_s:.1f} s**; wave 2 (every "
        f"shard's late channels) {r.late_posted} / {r.late_total} posted.",
    ]
    lines += [f"Note: {n}" for n in r.notes]
    return "\n".join(lines)
