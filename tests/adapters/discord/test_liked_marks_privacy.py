"""A digest's "👍 in #name" mark never names a channel not everyone in the workspace can see
(issue 25, gap 1). Visibility is what the platform said, recorded with the channel: Slack's
conversations.info (`is_private`/`is_im`/`is_mpim`) when `/papers` is typed there or a 👍 is
cast there; Discord's View Channel for @everyone, from the server the gateway keeps. A channel
whose visibility was never said counts as private.

Breaks that turn these red (each tried): liked_in() without its ``public`` filter (secret-lab
is named in #ml-reading's digest, and the never-said channel too); is_public() reading a
private channel as public (secret-lab named); the `/papers` listener not asking Slack
(journal-club, public, is not named: nothing recorded); the 👍 listener not asking again
(journal-club, made private, is still named), or the 👍 reaction listener not asking
(journal-club, public again, stays unnamed); Commands._run not recording ``ctx.public`` (no
channel is named); everyone_sees() ignoring @everyone's overwrite (room 222 named on Discord);
the client's on_guild_channel_update not recording (club, hidden later, still named); no
on_guild_role_update (@everyone losing View Channel leaves the server's channels public).
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import discord
import pytest

from bot.commands.replies import digest_reply
from digest.models import ChannelRef, SubscriptionKind
from tests.adapters.slack.test_slack_http import Harness, eventually
from tests.fakes.slack import FakeSlack
from tests.support.discord_app import discord_bot, dispatch, slash

NAMES = {
    "C1": "ml-reading",
    "C2": "secret-lab",
    "C3": "journal-club",
    "C4": "never-said",
    "C5": "reader",
}


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1", "C2", "C3", "C4", "C5")
        fake.private.add("C2")
        yield fake


def _marks(app, ref: ChannelRef) -> str:
    """Every why-line of the digest ``ref`` would get today."""
    day = datetime.now(UTC).date()
    return json.dumps(
        [c.why for c in digest_reply(app.digests.preview(ref, day)).cards], ensure_ascii=False
    )


@pytest.mark.asyncio
async def test_slack_marks_name_public_channels_only(app, slack):
    refs = {c: ChannelRef("slack", c, "T1") for c in NAMES}
    async with Harness(app, slack) as h:
        for c in ("C1", "C2", "C3", "C5"):  # typed in each channel: the adapter asks Slack
            await h.done("subscribe diffusion models", channel=c, user="U2")
        app.channels.follows.add(
            refs["C4"], SubscriptionKind.TOPIC, "diffusion models"
        )  # never typed in
        for c, name in NAMES.items():
            app.channels.claim(refs[c], None, name)
        # asked after each answer went out, so looked for until it is there
        await eventually(
            lambda: (
                [app.channels.lookup.get(refs[c]).public for c in NAMES]
                == [True, False, True, None, True]
            )
        )
        day = datetime.now(UTC).date()
        pick = app.digests.preview(refs["C1"], day).items[0].paper.id
        for c in ("C2", "C3", "C4"):
            app.channels.vote(refs[c], "U9", pick, 1)
        ch = app.channels.lookup.get(refs["C1"])
        assert (await h.digests.run_channel(ch.id, day)).startswith("posted")
        posted = json.dumps(slack.arrived("C1"), ensure_ascii=False)
        assert "👍 in #journal-club" in posted
        assert "secret-lab" not in posted and "never-said" not in posted
        # C1's pick went out; reader's next digest holds it too, marked the same way
        assert "👍 in #journal-club" in _marks(app, refs["C5"])
        # journal-club is made private; the next 👍 there asks Slack again
        slack.private.add("C3")
        await h.action({"action_id": "vote_up", "value": pick}, channel="C3", user="U2")
        await eventually(lambda: app.channels.lookup.get(refs["C3"]).public is False)
        assert "journal-club" not in _marks(app, refs["C5"])
        # made public again: a 👍 reaction there asks Slack too
        slack.private.discard("C3")
        reacted = {
            "type": "reaction_added",
            "user": "U2",
            "reaction": "+1",
            "event_ts": "9",
            "item": {"type": "message", "channel": "C3", "ts": "1.000001"},
        }
        assert (await h.event(reacted, event_id="Ev2")).status_code == 200
        await eventually(lambda: app.channels.lookup.get(refs["C3"]).public is True)
    marks = _marks(app, refs["C5"])
    assert "👍 in #journal-club" in marks and "secret-lab" not in marks and "never" not in marks
    assert "secret-lab" not in _marks(app, refs["C3"])  # nor the other way round
    assert slack.rejected == []


@pytest.mark.asyncio
async def test_a_slack_command_is_answered_before_slack_is_asked_about_the_channel(app, slack):
    """Whether the channel is public is asked after the answer: conversations.info (retried
    through a 429's Retry-After) must not stand between a `/papers` command and its reply.

    Break tried: `is_public` awaited into the context before running the command, as it was
    (conversations.info came first: red)."""
    async with Harness(app, slack) as h:
        await h.done("subscribe diffusion models", channel="C1", user="U2")
        ref = ChannelRef("slack", "C1", "T1")
        await eventually(lambda: app.channels.lookup.get(ref).public is True)
        del slack.calls[:]  # the channel exists now: the next command is asked about too
        await h.done("list", channel="C1", user="U2")
        await eventually(lambda: any(m == "conversations.info" for m, _ in slack.calls))
    names = [m for m, _ in slack.calls]
    answered = next(n for n, m in enumerate(names) if m.startswith("resp-"))
    assert answered < names.index("conversations.info"), names


def text_channel(cid: str, name: str, hidden: bool = False) -> dict:
    """A text channel of server 77 as Discord describes it; ``hidden``: an overwrite denies
    @everyone View Channel."""
    over = [{"id": "77", "type": 0, "allow": "0", "deny": str(1 << 10)}] if hidden else []
    return {
        "id": cid,
        "type": 0,
        "guild_id": "77",
        "name": name,
        "position": 0,
        "permission_overwrites": over,
        "nsfw": False,
        "parent_id": None,
    }


def add_guild(client: discord.Client) -> None:
    """Server 77 as the gateway's GUILD_CREATE gives it: @everyone may view channels, but an
    overwrite hides room 222 from @everyone."""
    everyone = {
        "id": "77",
        "name": "@everyone",
        "permissions": str(1 << 10),
        "position": 0,
        "color": 0,
        "hoist": False,
        "managed": False,
        "mentionable": False,
    }
    client._connection._add_guild_from_data(
        {
            "id": "77",
            "name": "Lab",
            "owner_id": "1",
            "roles": [everyone],
            "emojis": [],
            "features": [],
            "member_count": 2,
            "members": [],
            "voice_states": [],
            "presences": [],
            "threads": [],
            "stickers": [],
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "system_channel_flags": 0,
            "premium_tier": 0,
            "nsfw_level": 0,
            "preferred_locale": "en-US",
            "afk_timeout": 300,
            "channels": [
                text_channel("111", "lab"),
                text_channel("222", "secret", hidden=True),
                text_channel("333", "club"),
            ],
        }
    )


async def three_digest_channels(bot) -> dict[str, ChannelRef]:
    """Server 77 (see add_guild) with a digest in each of lab, secret and club, by id."""
    add_guild(bot.client)
    for cid in ("111", "222", "333"):
        await dispatch(
            bot.client, slash("subscribe", f"tok-{cid}", channel=cid, text="diffusion models")
        )
    return {c: ChannelRef("discord", c, "77") for c in ("111", "222", "333")}


@pytest.mark.asyncio
async def test_discord_marks_name_channels_everyone_may_view(app, monkeypatch):
    async with discord_bot(app, monkeypatch) as bot:
        refs = await three_digest_channels(bot)
        assert [app.channels.lookup.get(r).public for r in refs.values()] == [True, False, True]
        pick = app.digests.preview(refs["111"], datetime.now(UTC).date()).items[0].paper.id
        app.channels.vote(refs["222"], "5", pick, 1)
        app.channels.vote(refs["333"], "5", pick, 1)
        marks = _marks(app, refs["111"])
        assert "#club" in marks and "secret" not in marks
        # club is hidden from @everyone: the gateway's CHANNEL_UPDATE is recorded at once
        bot.client._connection.parse_channel_update(text_channel("333", "club", hidden=True))
        for _ in range(100):
            if app.channels.lookup.get(refs["333"]).public is False:
                break
            await asyncio.sleep(0.05)
        assert "#club" not in _marks(app, refs["111"])


@pytest.mark.asyncio
async def test_a_discord_thumbs_up_records_the_digest_channel_as_the_gateway_sees_it(
    app, monkeypatch
):
    """A 👍 reaction in a threaded digest's thread asks about the channel the thread hangs off:
    hidden from @everyone since it was set up, it stops being named. Break that turns this red:
    _react() not calling _note_public (club still named), or noting the thread instead of its
    parent (club's row unchanged)."""
    from bot.runtime.runner import DigestRunner
    from digest.delivery.steps import Deliveries

    async with discord_bot(app, monkeypatch) as bot:
        add_guild(bot.client)
        club = ChannelRef("discord", "333", "77")
        await dispatch(
            bot.client, slash("subscribe", "tok-s", channel="333", text="diffusion models")
        )
        app.channels.settings.set_option(club, "threads", True)
        assert app.channels.lookup.get(club).public is True
        ch = app.channels.lookup.get(club)
        runner = DigestRunner(Deliveries(app.papers, "w1"), {"discord": bot.client.poster})
        assert (await runner.run_channel(ch.id, datetime.now(UTC).date())).startswith("posted")
        thread = next(c for c in bot.fake.messages if c not in ("111", "222", "333"))
        bot.client.get_guild(77)._add_thread(
            discord.Thread(
                guild=bot.client.get_guild(77),
                state=bot.client._connection,
                data={
                    "id": thread,
                    "type": 11,
                    "guild_id": "77",
                    "name": "Digest",
                    "parent_id": "333",
                    "owner_id": "1000",
                    "message_count": 1,
                    "member_count": 1,
                    "thread_metadata": {
                        "archived": False,
                        "locked": False,
                        "auto_archive_duration": 1440,
                        "archive_timestamp": "2026-12-01T09:00:00+00:00",
                    },
                },
            )
        )
        hidden = text_channel("333", "club", hidden=True)  # changed while the bot was away
        bot.client.get_guild(77).get_channel(333)._update(bot.client.get_guild(77), hidden)
        item = bot.fake.messages[thread][0]
        raw = {
            "user_id": "42",
            "channel_id": thread,
            "message_id": item["id"],
            "guild_id": "77",
            "type": 0,
        }
        event = discord.RawReactionActionEvent(raw, discord.PartialEmoji(name="👍"), "REACTION_ADD")
        await bot.client.on_raw_reaction_add(event)
        assert [v.value for v in app.store.channels.feedback(ch.id)] == [1]
        assert app.channels.lookup.get(club).public is False


def everyone_role(view: bool) -> dict:
    """Server 77's @everyone role, allowed to view channels or not."""
    return {
        "id": "77",
        "name": "@everyone",
        "permissions": str(1 << 10 if view else 0),
        "position": 0,
        "color": 0,
        "hoist": False,
        "managed": False,
        "mentionable": False,
    }


@pytest.mark.asyncio
async def test_discord_everyone_role_losing_view_channel_makes_the_server_private(app, monkeypatch):
    """@everyone's own View Channel taken away (server settings, not a channel's overwrite):
    no digest channel of the server is public any more, and given back, those without a deny
    overwrite are again. Breaks that turn this red (each tried): no on_guild_role_update (all
    three stay as they were); its @everyone check inverted (`is_default()`: the same)."""
    async with discord_bot(app, monkeypatch) as bot:
        refs = await three_digest_channels(bot)
        pick = app.digests.preview(refs["111"], datetime.now(UTC).date()).items[0].paper.id
        app.channels.vote(refs["333"], "5", pick, 1)
        assert "#club" in _marks(app, refs["111"])

        async def public_now() -> list[bool | None]:
            await asyncio.sleep(0.2)  # the handler writes from a worker thread
            return [app.channels.lookup.get(r).public for r in refs.values()]

        state = bot.client._connection
        state.parse_guild_role_update({"guild_id": "77", "role": everyone_role(False)})
        assert await public_now() == [False, False, False]
        assert "#club" not in _marks(app, refs["111"])
        state.parse_guild_role_update({"guild_id": "77", "role": everyone_role(True)})
        assert await public_now() == [True, False, True]  # 222's overwrite still hides it
        assert "#club" in _marks(app, refs["111"])
