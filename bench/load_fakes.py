"""The strict Slack and Discord fakes with arrival times, a latency knob, and a Discord gateway.

bench/load.py measures a real `digestbot run` from outside: what the fakes received and when is
the measurement, so every call the bot makes is stamped with the bench's monotonic clock here.
"""

from __future__ import annotations

import json
import re
import threading
import time

from aiohttp import WSMsgType, web

from tests.fakes.discord import BOT, FakeDiscord
from tests.fakes.slack import FakeSlack

CALLBACK = re.compile(r"/interactions/\d+/([^/]+)/callback")
WEBHOOK = re.compile(r"/webhooks/\d+/([^/]+)(?:/messages/[^/]+)?")
#: Interaction responses that carry an answer (4 message, 7 update, 8 autocomplete choices).
ANSWERS = {4, 7, 8}


class TimedSlack(FakeSlack):
    """FakeSlack that stamps each call: ``first[method]`` is when it first arrived (monotonic);
    ``first_post[channel]`` when the first chat.postMessage landed there."""

    def __init__(self) -> None:
        super().__init__()
        self.first: dict[str, float] = {}
        self.first_post: dict[str, float] = {}
        self.posted = 0

    def answer(self, method: str, args: dict) -> tuple[int, dict, dict]:
        status, headers, body = super().answer(method, args)
        now = time.monotonic()
        if status == 200 and body.get("ok"):
            self.first.setdefault(method, now)
            if method == "chat.postMessage":
                self.posted += 1
                self.first_post.setdefault(str(args.get("channel", "")), now)
        return status, headers, body

    def clear_calls(self) -> None:
        """Drop the recorded calls (a long run would otherwise keep every digest in memory)."""
        with self._lock:
            self.calls.clear()
            self.messages.clear()


class TimedDiscord(FakeDiscord):
    """FakeDiscord with arrival times per interaction token and per channel, ``latency`` seconds
    added to every answer, and the ``/gateway`` routes the client asks for."""

    def __init__(self) -> None:
        super().__init__()
        self.latency = 0.0
        self.acked: dict[str, float] = {}  # token -> first accepted initial response
        self.answered: dict[str, float] = {}  # token -> first response carrying an answer
        self.first_post: dict[str, float] = {}  # channel -> first message accepted there
        self.gateway_url = ""
        self.posted = 0

    def answer(
        self, method: str, path: str, body: dict, files: dict | None = None
    ) -> tuple[int, dict, dict | list]:
        if self.latency:
            time.sleep(self.latency)  # outside the lock: the fake answers requests in parallel
        bare = path.partition("?")[0]
        if bare in ("/gateway", "/gateway/bot"):
            return (
                200,
                {},
                {
                    "url": self.gateway_url,
                    "shards": 1,
                    "session_start_limit": {
                        "total": 1000,
                        "remaining": 1000,
                        "reset_after": 0,
                        "max_concurrency": 1,
                    },
                },
            )
        status, headers, data = super().answer(method, path, body, files)
        if status >= 300:
            return status, headers, data
        now = time.monotonic()
        if m := CALLBACK.fullmatch(bare):
            self.acked.setdefault(m.group(1), now)
            if body.get("type") in ANSWERS:
                self.answered.setdefault(m.group(1), now)
        elif m := WEBHOOK.fullmatch(bare):
            self.answered.setdefault(m.group(1), now)
        elif method == "POST" and (m := re.fullmatch(r"/channels/(\d+)/messages", bare)):
            self.posted += 1
            self.first_post.setdefault(m.group(1), now)
        return status, headers, data

    def clear_calls(self) -> None:
        """Drop the recorded calls and messages (kept otherwise for the whole run)."""
        with self._lock:
            self.calls.clear()
            self.messages.clear()
            self.acks.clear()
            self.followups.clear()
            self.edits.clear()


class FakeGateway:
    """Discord's gateway, as much as discord.py needs: HELLO, READY after IDENTIFY, heartbeat
    ACKs, and INTERACTION_CREATE dispatches sent by the bench (JSON text frames, no zlib)."""

    def __init__(self) -> None:
        self.sockets: list[web.WebSocketResponse] = []
        self.seq = 0
        self.identified = 0
        self.ready = threading.Event()
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> str:
        """Serve on a free loopback port; returns the ws:// URL."""
        app = web.Application()
        app.router.add_get("/", self._socket)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/"
        return self.url

    async def stop(self) -> None:
        for ws in list(self.sockets):
            await ws.close()
        if self.runner is not None:
            await self.runner.cleanup()

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.sockets.append(ws)
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None})
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                data = json.loads(msg.data)
                if data.get("op") == 1:
                    await ws.send_json({"op": 11, "d": None, "s": None, "t": None})
                elif data.get("op") == 2:
                    self.identified += 1
                    await self.send(
                        ws,
                        "READY",
                        {
                            "v": 10,
                            "user": BOT,
                            "guilds": [],
                            "session_id": "bench",
                            "resume_gateway_url": self.url,
                            "application": {"id": "2000", "flags": 0},
                            "shard": [0, 1],
                        },
                    )
                    self.ready.set()
        finally:
            self.sockets.remove(ws)
        return ws

    async def send(self, ws: web.WebSocketResponse, event: str, data: dict) -> None:
        self.seq += 1
        await ws.send_json({"op": 0, "t": event, "s": self.seq, "d": data})

    async def dispatch(self, event: str, data: dict) -> bool:
        """Send ``event`` to the connected bot; False when no bot is connected."""
        if not self.sockets:
            return False
        await self.send(self.sockets[-1], event, data)
        return True
