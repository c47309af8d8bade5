"""Discord shards leased in the database: two replicas' real DigestClients against a local gateway
(HELLO, IDENTIFY, READY, heartbeats, as Discord speaks it) and the strict REST fake. Each shard is
served by exactly one replica; when one dies (stops renewing, its connections drop) the other
takes its shard over within the lease and identifies it at the gateway, and its scheduler then
runs the dead replica's channels.

Breaks that turn this red (each tried): the client launching every shard whatever the leases
(DigestClient.launch_shards treating no leased shards as all: both replicas identify both
shards); ``LeaseRepo.shards`` not taking lapsed leases over (a shard without a lease stays dark:
shard 0 never identified by the survivor); the lease listener not calling ``client.serve`` (the
survivor's leases move but its gateway connections do not); the scheduler's shards not following
the leases (the dead replica's channel never posted).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict
from datetime import UTC, datetime

import discord
import pytest
import time_machine
import yarl
from aiohttp import WSMsgType, web

from bot.adapters.deps import Deps
from bot.adapters.discord.client import DigestClient
from bot.runtime.leases import ReplicaLeases
from bot.runtime.runner import DigestRunner
from bot.runtime.scheduler import DigestScheduler
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, Shards, SubscriptionKind
from tests.fakes.discord import BOT, FakeDiscord
from tests.fakes.recording import RecordingAdapter

EVEN = str((1_000_000_000_000 << 22) | 12345)  # on shard 0 of 2
ODD = str((1_000_000_000_001 << 22) | 999)  # on shard 1 of 2
TTL, EVERY = 2.0, 0.25  # seconds: the production lease (60 s, every 20 s) scaled down
IDENTIFY_PAUSE = 5.0  # discord.py's before_identify_hook


class Gateway:
    """A local Discord gateway: records each IDENTIFY's token and shard, answers READY, acks
    heartbeats; ``open`` holds the (token, shard) of every connection still up."""

    def __init__(self) -> None:
        self.identified: list[tuple[str, int, int]] = []
        self.open: dict[int, list[str]] = defaultdict(list)  # shard -> tokens connected
        self.seq = 0

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 45000}, "s": None}))
        mine: tuple[str, int] | None = None
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    break
                frame = json.loads(msg.data)
                if frame.get("op") == 1:
                    await ws.send_str(json.dumps({"op": 11, "d": None}))
                elif frame.get("op") == 2:
                    token, (shard, count) = frame["d"]["token"], frame["d"]["shard"]
                    self.identified.append((token, shard, count))
                    mine = (token, shard)
                    self.open[shard].append(token)
                    self.seq += 1
                    ready = {
                        "v": 10,
                        "user": BOT,
                        "guilds": [],
                        "session_id": f"s{self.seq}",
                        "resume_gateway_url": str(request.url),
                        "shard": [shard, count],
                        "application": {"id": "2000", "flags": 0},
                    }
                    await ws.send_str(json.dumps({"op": 0, "t": "READY", "s": 1, "d": ready}))
        finally:
            if mine is not None:
                self.open[mine[1]].remove(mine[0])
        return ws

    def serving(self) -> dict[int, list[str]]:
        return {shard: sorted(tokens) for shard, tokens in self.open.items() if tokens}


async def _until(check, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        await asyncio.sleep(0.05)
    return check()


async def _nothing() -> None:
    return None


@pytest.mark.asyncio
async def test_a_dead_replicas_shard_is_taken_over_within_the_lease(app, monkeypatch):
    gateway = Gateway()
    server = web.Application()
    server.router.add_get("/", gateway.handle)
    runner = web.AppRunner(server)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    monkeypatch.setattr(
        discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(f"ws://127.0.0.1:{port}/")
    )
    guild0, guild1 = ChannelRef("discord", "100", EVEN), ChannelRef("discord", "200", ODD)
    with time_machine.travel(datetime(2026, 12, 2, tzinfo=UTC), tick=False):
        for ref in (guild0, guild1):
            app.channels.follows.add(ref, SubscriptionKind.TOPIC, "graph neural networks")
            app.channels.settings.set_schedule(ref, "09:00", "UTC", "daily")
    nine = datetime(2026, 12, 3, 9, 0, 5, tzinfo=UTC)
    app.store.leases.set_shard_count("discord", 2)  # once, for every replica
    replicas = {}
    try:
        with FakeDiscord() as fake:
            monkeypatch.setattr(discord.http.Route, "BASE", fake.base)

            async def start(name: str):
                client = DigestClient(
                    Deps(app.commands, app.channels), sync_on_change=False, leased=True
                )
                monkeypatch.setattr(client, "setup_hook", _nothing)
                adapter = RecordingAdapter("discord")
                sched = DigestScheduler(
                    DigestRunner(Deliveries(app.papers, name), {"discord": adapter}),
                    clock=lambda: nine,
                    shards=Shards(frozenset(), 2),
                )
                leases = ReplicaLeases(app.store.leases, name, "discord", 1, ttl=TTL, every=EVERY)

                async def apply(shards: Shards) -> None:
                    sched.shards = shards
                    await client.serve(shards)

                leases.listeners.append(apply)
                await leases.renew()  # before connecting, as `digestbot run` does
                await client.login(f"token-{name}")
                task = asyncio.create_task(client.connect())
                leases.start()
                replicas[name] = (client, leases, task, sched, adapter)

            await start("a")
            assert await _until(lambda: gateway.serving() == {0: ["token-a"], 1: ["token-a"]}, 10)
            await start("b")
            # b is live: a gives shard 1 back at its next renewal, b takes it at its own
            even = {0: ["token-a"], 1: ["token-b"]}
            assert await _until(lambda: gateway.serving() == even, 10), gateway.serving()
            assert {count for _, _, count in gateway.identified} == {2}

            # a dies: no more renewals, its connections drop, nothing given back
            client_a, leases_a, task_a, _, _ = replicas.pop("a")
            leases_a._task.cancel()
            await client_a.close()
            task_a.cancel()
            died = time.monotonic()
            assert await _until(lambda: gateway.serving() == {0: ["token-b"], 1: ["token-b"]}, 10)
            took = time.monotonic() - died
            # the lease, one renewal, discord.py's 5 s pause before an IDENTIFY that is not a
            # client's first (Discord's identify rate limit), slack; in production 60 + 20 + 5 s
            assert took <= TTL + EVERY + IDENTIFY_PAUSE + 1.5, took
            assert ("token-b", 0, 2) in gateway.identified

            # and b's scheduler now runs shard 0's channel as well as its own
            _, _, _, sched_b, posted_b = replicas["b"]
            assert set(await sched_b.tick()) == {str(guild0), str(guild1)}
            assert sorted(str(r) for r, _ in posted_b.digests) == sorted([str(guild0), str(guild1)])
    finally:
        for client, leases, task, _, _ in replicas.values():
            await leases.stop()
            await client.close()
            task.cancel()
        await runner.cleanup()
