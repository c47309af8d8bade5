"""Load bench: the fakes standing in for Slack and Discord, and the commands sent to the bot
through them as real platform requests (signed slash commands, gateway interactions)."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import socket
import time
from urllib.parse import urlencode

import httpx
from slack_sdk.signature import SignatureVerifier

from bench.load_data import (
    GUILD,
    SECRET,
    SLOW,
    TOPICS,
    Config,
    Sample,
    not_today,
)
from bench.load_fakes import FakeGateway, TimedDiscord, TimedSlack


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
            env |= {
                "DIGESTBOT_SLACK_BOT_TOKEN": "xoxb-load",
                "DIGESTBOT_SLACK_SIGNING_SECRET": SECRET,
                "DIGESTBOT_SLACK_API_URL": self.slack.url,
                "DIGESTBOT_SLACK_HOST": "127.0.0.1",
                "DIGESTBOT_SLACK_PORT": str(self.port),
            }
        if self.discord:
            env |= {
                "DIGESTBOT_DISCORD_TOKEN": "load-token",
                "LOAD_DISCORD_REST": self.discord.base,
                "LOAD_DISCORD_GATEWAY": self.gateway.url,
            }
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
        form = {
            "command": "/papers",
            "text": text,
            "team_id": "T1",
            "channel_id": channel,
            "user_id": "U1",
            "user_name": "ann",
            "response_url": f"{self.slack.url}{key}",
            "trigger_id": f"trig-{self.n}",
        }
        body = urlencode(form)
        ts = str(int(time.time()))
        headers = {
            "X-Slack-Request-Timestamp": ts,
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Signature": self.signer.generate_signature(timestamp=ts, body=body),
        }
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
        bodies = [
            *self.discord.acks.get(token, []),
            *self.discord.followups.get(token, []),
            *self.discord.edits.get(token, []),
        ]
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
        return rng.choice(
            [
                f"size {rng.randint(3, 10)}",
                f"threshold 0.{rng.randint(1, 5)}",
                f"schedule 09:{rng.randint(10, 59)} UTC {not_today()}",
                f"subscribe {rng.choice(TOPICS)}",
                "option quiet off",
            ]
        )
    return f"{rng.choice(['up', 'down'])} {rng.choice(papers)}"


def discord_payload(kind: str, rng: random.Random, papers: list[str], channel: str, n: int) -> dict:
    """An INTERACTION_CREATE payload of the given kind, as tests/discord_interactions builds."""
    from tests.support.discord_app import autocomplete, slash

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
            return slash(
                "schedule",
                token,
                time=f"09:{rng.randint(10, 59)}",
                timezone="UTC",
                days=not_today(),
                **where,
            )
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
            tasks.append(
                asyncio.create_task(pf.slack_command(slack_text(kind, rng, papers), channel, kind))
            )
        else:
            payload = discord_payload(kind, rng, papers, channel, k)
            tasks.append(asyncio.create_task(pf.discord_interaction(payload, kind)))
    return list(await asyncio.gather(*tasks))


async def wait_answered(pf: Platforms, samples: list[Sample], timeout: float) -> None:
    end = time.monotonic() + timeout
    while pf.pending(samples) and time.monotonic() < end:
        await asyncio.sleep(0.25)


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
            from tests.support.discord_app import slash

            values = {"query": rest} if verb == "search" else {}
            payload = slash(
                verb,
                f"probe-{time.monotonic_ns()}",
                channel=pf.channels["discord"][0],
                guild=GUILD,
                **values,
            )
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
