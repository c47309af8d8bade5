"""A 👍/👎 reaction on a digest message showing several papers (issue 23): it counts for none of
them, and the reacting person alone is asked which paper they meant, with a button per paper
that votes on the digest the message came from (Slack: an ephemeral message in the channel;
Discord: a direct message). On a one-paper message a reaction is still the vote itself.

Breaks that turn these red: reaction() returning None for a several-paper message (nothing
asked, as before); the Slack listener posting the question with chat.postMessage in a channel
(everyone sees it); card_row() giving the DM's buttons plain `dv:u:<paper>` ids (the press in
the DM lands on the person's own digest, not the channel's); vote_in() voting where it was
pressed; the question's buttons not naming the channel (Slack: a press in the channel still
works; Discord: red)."""

from __future__ import annotations

import asyncio
import json
from datetime import date

import discord
import pytest

from bot.commands.reactions import reaction
from bot.runtime.runner import DigestRunner
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from tests.adapters.slack.test_slack_http import Harness, eventually
from tests.fakes.recording import RecordingAdapter
from tests.fakes.slack import FakeSlack
from tests.support.discord_app import discord_app_bot, dispatch, embed_text, press  # noqa: F401

DAY = date(2026, 12, 1)


def test_the_core_asks_which_paper_on_a_message_with_several(app):
    ref = ChannelRef("console", "lab")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    ch = app.store.channels.get(ref)
    adapter = RecordingAdapter("console", per_message=3)
    runner = DigestRunner(Deliveries(app.papers, "w1"), {"console": adapter})
    assert "posted" in asyncio.run(runner.run_channel(ch.id, DAY))
    key, ids = next((k, ids) for _, k, ids in adapter.messages if len(ids) > 1)
    ask = reaction(app.commands, "console", "ann", [f"msg-{key}"], -1)
    assert ask is not None and ask.ephemeral and f"showing {len(ids)} papers" in ask.text
    assert [c.paper_id for c in ask.cards] == list(ids)
    assert [a.value for c in ask.cards for a in c.actions if a.kind == "down"] == [
        f"{p} {ch.id}" for p in ids
    ]
    assert app.store.channels.feedback(ch.id) == []  # nothing guessed
    assert reaction(app.commands, "console", "ann", [f"msg-{key}"], 0) is None
    assert reaction(app.commands, "console", "ann", ["msg-unknown"], 1) is None


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")
        fake.members["C1"] = {"U1"}
        yield fake


@pytest.mark.asyncio
async def test_slack_asks_the_reacting_person_alone_and_the_button_votes_here(app, slack):
    c1 = ChannelRef("slack", "C1", "T1")
    async with Harness(app, slack) as h:
        await h.done("subscribe diffusion models")
        ch = app.store.channels.get(c1)
        assert (await h.digests.run_channel(ch.id, DAY)).startswith("posted")
        shown = next(
            m
            for m in slack.arrived("C1")
            if sum(b.get("type") == "actions" for b in m.get("blocks", [])) > 1
        )
        before = len(slack.calls)
        event = {
            "type": "reaction_added",
            "user": "U1",
            "reaction": "+1",
            "event_ts": "9",
            "item": {"type": "message", "channel": "C1", "ts": shown["ts"]},
        }
        assert (await h.event(event, event_id="Ev-multi")).status_code == 200
        await eventually(lambda: any(m == "chat.postEphemeral" for m, _ in slack.calls[before:]))
        asked = next(a for m, a in slack.calls[before:] if m == "chat.postEphemeral")
        assert asked["user"] == "U1" and asked["channel"] == "C1"
        assert not any(m == "chat.postMessage" for m, _ in slack.calls[before:])
        blocks = asked["blocks"]
        blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
        ups = [
            e
            for b in blocks
            if b["type"] == "actions"
            for e in b["elements"]
            if e.get("action_id") == "vote_up"
        ]
        assert len(ups) > 1 and app.store.channels.feedback(ch.id) == []
        paper = ups[1]["value"].split(" ")[0]
        await h.action({**ups[1], "block_id": f"act:{paper}"}, channel="C1")
        await eventually(lambda: app.channels.vote_counts(c1, paper) == (1, 0))
    assert slack.rejected == []


@pytest.mark.asyncio
async def test_discord_asks_by_dm_and_the_button_votes_on_the_channel(bot):
    server = ChannelRef("discord", "111", "77")
    bot.app.channels.follows.add(server, SubscriptionKind.TOPIC, "diffusion models")
    ch = bot.app.store.channels.get(server)
    runner = DigestRunner(Deliveries(bot.app.papers, "w1"), {"discord": bot.client.poster})
    assert (await runner.run_channel(ch.id, DAY)).startswith("posted")
    shown = next(m for m in bot.fake.arrived("111") if len(m.get("components", [])) > 1)
    raw = {
        "user_id": "42",
        "channel_id": "111",
        "message_id": shown["id"],
        "guild_id": "77",
        "type": 0,
    }
    event = discord.RawReactionActionEvent(raw, discord.PartialEmoji(name="👎"), "REACTION_ADD")
    await bot.client.on_raw_reaction_add(event)
    assert bot.app.store.channels.feedback(ch.id) == []
    (asked,) = bot.fake.arrived("942")  # the DM with user 42
    assert "Which paper?" in embed_text(asked) and bot.fake.rejected == []
    downs = [
        b["custom_id"]
        for r in asked["components"]
        for b in r["components"]
        if b.get("label", "").startswith("👎")
    ]
    assert len(downs) > 1 and all(d.startswith(f"dv:d@{ch.id}:") for d in downs)
    await dispatch(bot.client, press(bot.fake, asked, downs[0], "w1", guild=None))
    paper = downs[0].split(":", 2)[2]
    assert [(v.user, v.paper_id, v.value) for v in bot.app.store.channels.feedback(ch.id)] == [
        ("42", paper, -1)
    ]
    mine = bot.app.store.channels.get(bot.app.channels.personal_ref("discord", "42"))
    assert mine is None or bot.app.store.channels.feedback(mine.id) == []
