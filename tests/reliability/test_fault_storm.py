"""Fault storm: the fake Slack API answers 30% of calls with 429, 500 or a timeout.

Every digest must still be delivered within the retry budget, and none twice.
"""

import asyncio
import random
from datetime import date, timedelta

from bot.adapters.slack.poster import SlackPoster
from bot.runtime.runner import DigestRunner
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from tests.fakes.slack import FakeSlack

TOPICS = [
    "diffusion models",
    "graph neural networks",
    "federated learning",
    "sparse autoencoders",
    "reinforcement learning",
]
DAY = date(2026, 12, 1)
LAPSE = 0.25  # seconds: leases here last 0.2 s, so a round of recovery finds every lapsed claim


def deliveries(app, worker: str) -> Deliveries:
    return Deliveries(app.papers, worker, lease=timedelta(seconds=0.2), backoff=(0.05,))


def test_fault_storm_delivers_everything_exactly_once(app):
    rng = random.Random(7)
    channels = []
    for n in range(50):
        ref = ChannelRef("slack", f"C{n:03d}", "T1")
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, TOPICS[n % len(TOPICS)])
        channels.append(app.store.channels.get(ref))
    with FakeSlack() as slack:
        slack.join(*(c.ref.channel_id for c in channels))
        slack.chaos = lambda method, args: (
            rng.choice(["429", "500", "timeout"]) if rng.random() < 0.3 else None
        )

        async def lookup(team):
            return "xoxb"

        def runner(worker):
            poster = SlackPoster(
                lookup, base_url=slack.url, min_interval=0, backoff=0.01, timeout=1
            )
            return DigestRunner(deliveries(app, worker), {"slack": poster})

        async def storm():
            rounds = 0
            for d in range(3):  # three days: 150 digests
                first = runner(f"day{d}")
                await asyncio.gather(
                    *(first.run_channel(ch.id, DAY + timedelta(days=d)) for ch in channels)
                )
                while app.store.deliveries.unfinished() and rounds < 60:  # the retry budget
                    rounds += 1
                    await asyncio.sleep(LAPSE)
                    await runner(f"w{rounds}").recover()
            return rounds

        rounds = asyncio.run(storm())
    keys = [
        m["metadata"]["event_payload"]["key"]
        for msgs in slack.messages.values()
        for m in msgs
        if m.get("metadata")
    ]
    expected = {f"digest-{ch.id}-{DAY + timedelta(days=d)}" for ch in channels for d in range(3)}
    duplicates = len(keys) - len(set(keys))
    keys = {k.split("#")[0] for k in keys}
    misses = len(expected - keys)
    print(
        f"\nfault storm: {len(slack.calls)} calls, injected {dict(slack.injected)}, "
        f"{rounds} recovery rounds, duplicates {duplicates}, misses {misses}"
    )
    assert sum(slack.injected.values()) > 40
    assert duplicates == 0 and misses == 0 and keys == expected
    assert not app.store.deliveries.unfinished()


def test_discord_fault_storm_delivers_everything_exactly_once(app, monkeypatch):
    import discord

    from bot.adapters.discord.poster import DiscordPoster
    from tests.fakes.discord import FakeDiscord

    rng = random.Random(5)
    channels = []
    for n in range(50):
        ref = ChannelRef("discord", str(500 + n), "77")
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, TOPICS[n % len(TOPICS)])
        channels.append(app.store.channels.get(ref))
    with FakeDiscord() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.base)
        fake.channels.update(ch.ref.channel_id for ch in channels)  # else 404 / 10003, as Discord
        fake.chaos = lambda method, path: (
            rng.choice(["429", "429", "500", "drop"]) if rng.random() < 0.3 else None
        )

        async def storm():
            client = discord.Client(intents=discord.Intents.none())
            await client.login("token")
            poster = DiscordPoster(client)
            rounds = 0
            for d in range(3):
                first = DigestRunner(deliveries(app, f"day{d}"), {"discord": poster})
                await asyncio.gather(
                    *(first.run_channel(ch.id, DAY + timedelta(days=d)) for ch in channels)
                )
                while app.store.deliveries.unfinished() and rounds < 60:
                    rounds += 1
                    await asyncio.sleep(LAPSE)
                    await DigestRunner(deliveries(app, f"w{rounds}"), {"discord": poster}).recover()
            await client.close()
            return rounds

        rounds = asyncio.run(storm())
    footers = [
        m["embeds"][-1]["footer"]["text"].rsplit("· ", 1)[-1]
        for msgs in fake.messages.values()
        for m in msgs
        if m["embeds"] and "digest-" in m["embeds"][-1].get("footer", {}).get("text", "")
    ]
    expected = {f"digest-{ch.id}-{DAY + timedelta(days=d)}" for ch in channels for d in range(3)}
    digests = {f.split("#")[0] for f in footers}
    duplicates, misses = len(footers) - len(set(footers)), len(expected - digests)
    print(
        f"\ndiscord fault storm: {len(fake.calls)} calls, injected {dict(fake.injected)}, "
        f"{rounds} recovery rounds, duplicates {duplicates}, misses {misses}"
    )
    assert sum(fake.injected.values()) > 30 and duplicates == 0 and misses == 0
    assert not app.store.deliveries.unfinished()
