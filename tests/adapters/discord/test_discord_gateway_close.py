"""A gateway close 4004 (the token was reset) is logged once and turns /healthz unhealthy (issue 23).

The bot logs in against the strict REST fake, then connects to a local gateway that says HELLO and
answers the IDENTIFY with close code 4004, as Discord does for a token it no longer accepts.
discord.py ends its connect() with ConnectionClosed(4004); before the fix that ended a background
task nobody awaited: the process stayed up with Discord dead, nothing logged, /healthz green once
the client looked "ready" in any other way.

Breaks that turn this red (each tried): no done-callback on the connect task (nothing logged,
`failed` stays empty, /healthz ok); the callback logging but not recording the reason in
``application.failed`` (/healthz ok); Health ignoring ``failed`` for a connected-looking platform.
"""

from __future__ import annotations

import asyncio
import json
import logging
from types import SimpleNamespace

import discord
import pytest
import yarl
from aiohttp import web
from pydantic import SecretStr

from bot.adapters.deps import Deps
from bot.adapters.discord.client import DigestClient
from bot.cli.startup import start_discord
from bot.runtime.ops import Health
from tests.fakes.discord import FakeDiscord

IDENTIFIED: list[bool] = []  # the gateway got an IDENTIFY (so 4004 answered a login)


async def _gateway(request: web.Request) -> web.WebSocketResponse:
    """HELLO, wait for IDENTIFY, then close 4004 (Authentication failed)."""
    ws = web.WebSocketResponse()
    await ws.prepare(request)
    await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 45000}, "s": None}))
    async for msg in ws:
        if json.loads(msg.data).get("op") == 2:
            IDENTIFIED.append(True)
            await ws.close(code=4004, message=b"Authentication failed.")
    return ws


@pytest.mark.asyncio
async def test_close_4004_is_logged_and_unhealthy(app, monkeypatch, caplog):
    """One error naming the token, and /healthz: discord not ok, with the reason."""
    server = web.Application()
    server.router.add_get("/", _gateway)
    runner = web.AppRunner(server)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    monkeypatch.setattr(
        discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(f"ws://127.0.0.1:{port}/")
    )
    try:
        with FakeDiscord() as fake:
            monkeypatch.setattr(discord.http.Route, "BASE", fake.base)
            client = DigestClient(Deps(app.commands, app.channels), sync_on_change=False)
            monkeypatch.setattr(client, "setup_hook", _nothing)  # no command sync here
            application = SimpleNamespace(
                discord=client,
                settings=SimpleNamespace(discord_token=SecretStr("token")),
                failed={},
            )
            caplog.set_level(logging.ERROR, logger="bot.cli.startup")
            task = await start_discord(application)
            assert isinstance(task, asyncio.Task)
            with pytest.raises(discord.ConnectionClosed):
                await asyncio.wait_for(task, 20)
            await asyncio.sleep(0)  # done callbacks run on the next loop turn
            await client.close()
        assert IDENTIFIED
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1 and "4004" in errors[0] and "DIGESTBOT_DISCORD_TOKEN" in errors[0]
        health = Health(
            app.papers, lambda: True, {"discord": lambda: True}, failed=application.failed
        )
        ok, checks = await health.report()
        assert not ok and not checks["discord"]["ok"] and "4004" in checks["discord"]["error"]
    finally:
        await runner.cleanup()


async def _nothing() -> None:
    return None
