"""The reading group's week against the strict Slack and Discord fakes: the poll's buttons,
the announcement with its card, the discussion thread on it (Slack: replies by thread_ts to
the announcement; Discord: a thread started on the announcement message) holding the
thread's opening, the reminder and the recap, each posted once."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import discord
import httpx
import pytest
import time_machine

from bot.adapters.discord.poster import DiscordPoster
from bot.adapters.slack.poster import SlackPoster
from digest.models import ChannelRef
from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack
from tests.reading.support import CLOSE, OPEN, RECAP, REMIND, cmd, sender, setup_group, sweep

SLACK = ChannelRef("slack", "C1", "T1")
DISCORD = ChannelRef("discord", "111", "77")


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")
        yield fake


@pytest.fixture
def fake_discord(monkeypatch):
    with FakeDiscord() as f:
        monkeypatch.setattr(discord.http.Route, "BASE", f.base)
        yield f


def slack_poster(slack: FakeSlack) -> SlackPoster:
    async def lookup(team: str) -> str:
        return "xoxb-test"

    return SlackPoster(lookup, base_url=slack.url, min_interval=0)


def discord_sweep(app, at, worker: str = "w1") -> dict[str, str]:
    async def go():
        client = discord.Client(intents=discord.Intents.none())
        await client.login("fake-token")
        try:
            return await sender(app, {"discord": DiscordPoster(client)}, worker).sweep()
        finally:
            await client.close()

    with time_machine.travel(at, tick=False):
        return asyncio.run(go())


def test_a_week_on_slack(app, slack):
    """Break tried: the thread posts sent without thread_ts (in the channel: red)."""
    a, b, c = setup_group(app, SLACK)
    adapters = {"slack": slack_poster(slack)}
    sweep(app, adapters, OPEN)
    (poll,) = slack.arrived("C1")
    buttons = [e for blk in poll["blocks"] if blk["type"] == "actions" for e in blk["elements"]]
    votes = [e for e in buttons if e["action_id"] == "rg_vote"]
    assert [v["value"].split()[1] for v in votes] == [a, b, c]
    poll_id = votes[0]["value"].split()[0]
    # a press arrives as the command the Slack listener runs (bot/adapters/slack/reading.py)
    assert not cmd(app, SLACK, f"reading-group vote {c} {poll_id}", "U7").error
    sweep(app, adapters, CLOSE)
    sweep(app, adapters, REMIND)
    sweep(app, adapters, RECAP)
    assert sweep(app, adapters, RECAP + timedelta(minutes=1)) == {}
    msgs = slack.arrived("C1")
    assert len(msgs) == 5 and slack.refusals == []
    announcement = msgs[1]
    assert announcement.get("thread_ts") is None and "Reading group pick" in announcement["text"]
    assert any(
        blk.get("block_id", "").startswith(f"paper:{c}") for blk in announcement["blocks"]
    )  # the pick's card
    thread = msgs[2:]
    assert [m["thread_ts"] for m in thread] == [announcement["ts"]] * 3
    assert "Discussion thread" in thread[0]["text"] and "one hour" in thread[1]["text"]
    link = f"https://slack.com/archives/C1/p{announcement['ts'].replace('.', '')}"
    assert "@U7" in thread[2]["text"] and link in thread[2]["text"]
    keys = [m["metadata"]["event_payload"]["key"] for m in msgs]
    assert len(set(keys)) == 5  # each under its own ledger key


def test_a_week_on_discord(app, fake_discord):
    """Breaks tried: the thread posts not sent into the announcement's thread (they land in
    the channel: red); the thread's name not cut to 100 characters (the fake's 50035: red)."""
    a, _, _ = setup_group(app, DISCORD)
    discord_sweep(app, OPEN)
    (poll,) = fake_discord.arrived("111")
    ids = [
        comp["custom_id"]
        for row in poll.get("components", [])
        for comp in row["components"]
        if comp.get("custom_id", "").startswith("dv:g:")
    ]
    assert len(ids) == 3 and ids[0].endswith(f" {a}")
    poll_id = ids[0].split(":")[2].split()[0]
    assert not cmd(app, DISCORD, f"reading-group vote {a} {poll_id}", "42").error
    discord_sweep(app, CLOSE)
    discord_sweep(app, REMIND)
    discord_sweep(app, RECAP)
    assert discord_sweep(app, RECAP + timedelta(minutes=1)) == {}
    top = fake_discord.arrived("111")
    assert len(top) == 2  # the poll and the announcement; the rest in its thread
    announcement = top[1]
    assert fake_discord.threads == {announcement["id"]: "111"}
    in_thread = fake_discord.arrived(announcement["id"])
    assert len(in_thread) == 3
    # each sweep here is a fresh poster (as after a restart): it asks again and takes Discord's
    # "already has a thread" as there; nothing else was refused
    assert {code for _, code in fake_discord.thread_refusals} <= {160004}
    recap = in_thread[2]
    text = recap.get("content", "") + " ".join(
        e.get("description", "") for e in recap.get("embeds", [])
    )
    assert f"https://discord.com/channels/77/{announcement['id']}" in text


def test_the_discord_fake_refuses_a_thread_name_discord_refuses(fake_discord):
    fake_discord.channels.add("111")
    r = httpx.post(f"{fake_discord.base}/channels/111/messages", json={"content": "x"})
    mid = r.json()["id"]
    for name in ("", "x" * 101):
        got = httpx.post(
            f"{fake_discord.base}/channels/111/messages/{mid}/threads", json={"name": name}
        )
        assert (got.status_code, got.json()["code"]) == (400, 50035)
    missing = httpx.post(
        f"{fake_discord.base}/channels/111/messages/999/threads", json={"name": "t"}
    )
    assert missing.json()["code"] == 10008
    ok = httpx.post(
        f"{fake_discord.base}/channels/111/messages/{mid}/threads", json={"name": "t" * 100}
    )
    assert ok.status_code == 201
