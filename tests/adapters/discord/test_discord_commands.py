"""Discord app commands invoked with constructed interactions; autocomplete; persistent buttons."""

import asyncio
import re
from types import SimpleNamespace

import discord
import pytest

from bot.adapters.deps import Deps
from bot.adapters.discord.client import DigestClient
from bot.adapters.discord.commands import Papers, paper_choices, subscription_choices
from bot.commands.core import REGISTRY
from bot.runtime.effects import EffectExecutor
from digest.models import ChannelRef
from tests.commands.test_commands import ctx
from tests.fakes.discord import BOT, FakeDiscord, user
from tests.fakes.discord_interactions import issue
from tests.fakes.discord_limits import check

pytestmark = pytest.mark.asyncio


class FakeInteraction:
    """Just what the callbacks touch: who, where, permissions, response and follow-ups."""

    def __init__(self, user_id=42, channel_id=111, guild_id=77, manage_channels=True):
        self.user = SimpleNamespace(id=user_id, display_name=f"user{user_id}")
        self.channel_id, self.guild_id = channel_id, guild_id
        self.permissions = discord.Permissions(manage_channels=manage_channels)
        self.deferred, self.sent = [], []
        self.response = SimpleNamespace(defer=self._defer)
        self.followup = SimpleNamespace(send=self._send)

    async def _defer(self, ephemeral=False, thinking=False):
        self.deferred.append(ephemeral)

    async def _send(self, **kwargs):
        self.sent.append(kwargs)

    def text(self) -> str:
        return " ".join(
            str(e.to_dict()) for s in self.sent for e in s.get("embeds", [])
        ) + " ".join(s.get("content") or "" for s in self.sent)


@pytest.fixture
def group(app):
    return Papers(Deps(app.commands, app.channels))


async def call(group, name_, interaction, /, **kwargs):
    cmd = next(c for c in group.commands if c.name == name_)
    await cmd.callback(group, interaction, **kwargs)
    return interaction


async def test_every_core_subcommand_is_an_app_command(group):
    names = {c.name for c in group.commands}
    # `zotero` is about a person, so it lives under `me` only (and /papers is at Discord's 25)
    me = next(c for c in group.commands if c.name == "me")
    # the reading group's commands are their own group, /reading-group (bot/adapters/discord/reading.py)
    from bot.adapters.discord.reading import ReadingGroupCommands

    reading = {"reading-group", "nominate"} & {
        "reading-group" if c.name == "show" else c.name
        for c in ReadingGroupCommands.__discord_app_commands_group_children__
    }
    assert set(REGISTRY) <= names | {c.name for c in me.commands} | reading and len(names) <= 25
    for c in group.walk_commands():
        assert c.description and all(p.description for p in getattr(c, "parameters", []))


async def test_subscribe_round_trip_through_callbacks(app, group):
    i = await call(group, "subscribe", FakeInteraction(), text="diffusion models")
    assert i.deferred == [True] and i.sent[0]["ephemeral"] is True
    assert "Now following topic 'diffusion models'" in i.text()
    i = await call(group, "list", FakeInteraction(), public=True)
    assert (
        i.deferred == [False] and i.sent[0]["ephemeral"] is False and "diffusion models" in i.text()
    )
    assert [s.text for s in app.channels.subscriptions(ChannelRef("discord", "111", "77"))] == [
        "diffusion models"
    ]


async def test_every_chat_option_can_be_set_from_discord(app, group):
    """README's `option` list holds on Discord too. Break seen red: 'backlog' missing from the
    command's choices (Discord offers, and accepts, only those)."""
    option = next(c for c in group.commands if c.name == "option")
    offered = {c.value for c in option.get_parameter("name").choices}
    from bot.commands.handlers_channel import OPTIONS  # the chat core's options, every one

    assert offered == set(OPTIONS) and {"weekly", "share-votes"} <= offered
    await call(group, "subscribe", FakeInteraction(), text="diffusion models")
    await call(group, "option", FakeInteraction(), name="backlog", on=False)
    assert app.store.channels.get(ChannelRef("discord", "111", "77")).backlog is False


async def test_settings_need_manage_channels_once_admin_only(app, group):
    await call(group, "option", FakeInteraction(), name="admin-only", on=True)
    i = await call(group, "schedule", FakeInteraction(manage_channels=False), time="08:00")
    assert "Only channel admins" in i.text() and i.sent[0]["ephemeral"] is True
    i = await call(
        group,
        "schedule",
        FakeInteraction(),
        time="08:00",
        timezone="Europe/Berlin",
        days="weekdays",
    )
    assert "Digests at 08:00 Europe/Berlin" in i.text()


async def test_search_pages_use_buttons_and_replies_stay_within_limits(app, group):
    i = await call(
        group, "search", FakeInteraction(), query="graph neural networks", author="Grace Hopper"
    )
    view = i.sent[-1]["view"]  # one message: papers, their links and the pager
    assert len(i.sent) == 1
    assert any(getattr(c, "custom_id", "").startswith("dv:p:") for c in view.children)
    assert i.sent[0]["allowed_mentions"].everyone is False
    i = await call(group, "export", FakeInteraction(), which="liked")
    assert "This channel has no digest yet" in i.text()  # reading it created nothing


async def test_autocomplete_offers_subscriptions_and_papers(app, group):
    await call(group, "subscribe", FakeInteraction(), text="sparse autoencoders")
    await call(group, "subscribe", FakeInteraction(), text="Grace Hopper", kind="author")
    deps = group.deps
    choices = await subscription_choices(deps, FakeInteraction(), "sparse")
    assert [(c.name, c.value) for c in choices] == [("1. sparse autoencoders", "1")]
    assert ("2. author:Grace Hopper", "2") in [
        (c.name, c.value) for c in await subscription_choices(deps, FakeInteraction(), "")
    ]
    papers = await paper_choices(deps, "sparse autoencoders")
    assert (
        papers
        and all(c.value.startswith("syn-sae") for c in papers[:5])
        and all(len(c.name) <= 100 for c in papers)
    )
    assert (await paper_choices(deps, "syn-rl-3"))[0].value == "syn-rl-3"


async def test_digest_now_asks_the_runner(app, group):
    asked = []

    async def deliver(ref, day):
        asked.append(ref)
        return "posted 5 papers"

    group.deps.effects = EffectExecutor(app.channels, deliver)
    await call(group, "subscribe", FakeInteraction(), text="diffusion models")
    i = await call(group, "digest", FakeInteraction(), mode="now")
    assert asked == [ChannelRef("discord", "111", "77")] and "posted 5 papers" in i.text()


def component_interaction(client, custom_id: str) -> discord.Interaction:
    message = {
        "id": "7001",
        "channel_id": "111",
        "author": BOT,
        "content": "",
        "timestamp": "2026-12-01T09:00:00+00:00",
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "pinned": False,
        "type": 0,
        "flags": 0,
        "components": [
            {
                "type": 1,
                "components": [{"type": 2, "style": 2, "label": "👍", "custom_id": custom_id}],
            }
        ],
    }
    payload = {
        "id": issue(3),
        "application_id": "2000",
        "type": 3,
        "token": "tok",
        "version": 1,
        "channel_id": "111",
        "guild_id": "77",
        "member": {
            "user": user("42"),
            "roles": [],
            "joined_at": "2026-01-01T00:00:00+00:00",
            "deaf": False,
            "mute": False,
            "permissions": "16",
            "flags": 0,
        },
        "data": {"custom_id": custom_id, "component_type": 2},
        "message": message,
        "locale": "en-US",
        "app_permissions": "0",
        "entitlements": [],
        "attachment_size_limit": 10_000_000,
        "channel": {
            "id": "111",
            "type": 0,
            "guild_id": "77",
            "name": "lab",
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
        },
    }
    return discord.Interaction(data=payload, state=client._connection)


async def test_buttons_on_old_digests_still_work_after_a_restart(app, monkeypatch):
    with FakeDiscord() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.base)
        client = DigestClient(
            Deps(app.commands, app.channels), sync_on_change=False
        )  # a fresh process
        await client.login("token")  # runs setup_hook: dynamic buttons are registered
        interaction = component_interaction(client, "dv:u:syn-diffusion-1")
        client._connection._view_store.dispatch_view(2, "dv:u:syn-diffusion-1", interaction)
        for _ in range(50):
            if app.store.channels.feedback_totals(1):
                break
            await asyncio.sleep(0.05)
        await client.close()
    ch = app.store.channels.get(ChannelRef("discord", "111", "77"))
    assert app.store.channels.feedback_totals(ch.id) == {"syn-diffusion-1": 1}
    assert any(re.fullmatch(r"/interactions/\d+/tok/callback", p) for _, p, _ in fake.calls)
    # The click shapes the next digest: new diffusion papers are explained by the liked one.
    from digest.models import SubscriptionKind
    from tests.support.corpus import synthetic_records

    app.channels.follows.add(ch.ref, SubscriptionKind.TOPIC, "diffusion models")
    app.store.papers.upsert(
        [r for r in synthetic_records(per_topic=33) if r.id.startswith("syn-diffusion-3")]
    )
    from datetime import date

    preview = app.digests.preview(ch.ref, date(2026, 12, 2))
    from digest.rank.why import title_ref

    title = title_ref(app.store.papers.get_many(["syn-diffusion-1"])["syn-diffusion-1"].title)
    assert preview.items and any(f"like {title}, which you liked" in i.why for i in preview.items)


async def test_commands_sync_only_when_the_tree_changed(app, monkeypatch):
    def puts():
        return sum(1 for m, p, _ in fake.calls if m == "PUT" and p.endswith("/commands"))

    with FakeDiscord() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.base)
        for expected in (1, 1):  # first start syncs; a restart with the same commands does not
            client = DigestClient(Deps(app.commands, app.channels))
            await client.login("token")  # setup_hook runs here, never in on_ready
            await client.close()
            assert puts() == expected
        client = DigestClient(Deps(app.commands, app.channels))
        client.tree.add_command(
            discord.app_commands.Command(name="extra", description="x", callback=_noop)
        )
        await client.login("token")
        await client.close()
        assert puts() == 2  # the tree changed


async def _noop(interaction: discord.Interaction) -> None:
    pass


def test_render_limits_hold_for_command_replies(app):
    from bot.adapters.discord.embeds import render

    reply = app.commands.handle("search graph neural networks", ctx())
    for m in render(reply):
        check(m)


async def test_reactions_on_digest_items_are_votes_and_guild_removal_pauses(app, monkeypatch):
    from datetime import date

    from bot.runtime.runner import DigestRunner
    from digest.delivery.steps import Deliveries
    from digest.models import SubscriptionKind

    with FakeDiscord() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.base)
        client = DigestClient(Deps(app.commands, app.channels), sync_on_change=False)
        await client.login("token")
        ref = ChannelRef("discord", "111", "77")
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
        app.channels.settings.set_option(ref, "threads", True)
        ch = app.store.channels.get(ref)
        runner = DigestRunner(Deliveries(app.papers, "w1"), {"discord": client.poster})
        assert await runner.run_channel(ch.id, date(2026, 12, 1)) == "posted 5 papers"
        thread_id = next(c for c in fake.messages if c != "111")
        item = fake.messages[thread_id][0]
        raw = {
            "user_id": "42",
            "channel_id": thread_id,
            "message_id": item["id"],
            "guild_id": "77",
            "type": 0,
        }
        event = discord.RawReactionActionEvent(raw, discord.PartialEmoji(name="👍"), "REACTION_ADD")
        await client.on_raw_reaction_add(event)
        await client.on_raw_reaction_add(event)  # a duplicate event sets the same vote again
        assert [v.value for v in app.store.channels.feedback(ch.id)] == [1]
        await client.on_raw_reaction_remove(event)
        assert app.store.channels.feedback(ch.id) == []
        other = ChannelRef("discord", "111", "78")  # the same channel id in another server
        app.channels.follows.add(other, SubscriptionKind.TOPIC, "graphs")
        mine = ChannelRef("discord", "@42", "77")  # a member's personal digest of server 77
        app.channels.follows.add(mine, SubscriptionKind.TOPIC, "graphs")
        await client.on_guild_remove(SimpleNamespace(id=77))
        await client.close()
    ch = app.store.channels.get(ref)
    assert ch.paused and "removed from this server" in ch.paused_reason
    assert app.store.channels.get(mine).paused
    assert not app.store.channels.get(other).paused  # only the server the bot left
    assert app.channels.subscriptions(ref)  # data kept


async def test_new_server_channels_need_manage_channels_by_default(app, group):
    i = await call(group, "subscribe", FakeInteraction(manage_channels=False), text="graphs")
    assert "Only channel admins" in i.text()
    i = await call(group, "subscribe", FakeInteraction(manage_channels=False), text="me-only")
    await call(
        group, "option", FakeInteraction(), name="admin-only", on=False
    )  # a manager opens it up
    i = await call(group, "subscribe", FakeInteraction(manage_channels=False), text="graphs")
    assert "Now following topic 'graphs'" in i.text()
    me = group.get_command("me")
    i = await call(me, "subscribe", FakeInteraction(manage_channels=False, user_id=7), text="RLHF")
    assert "Now following topic 'RLHF'" in i.text()  # a personal digest is always the user's own


def test_discord_sync_cli_and_composition(app, tmp_path, monkeypatch, capsys):
    from bot.app import build
    from bot.cli.main import main
    from bot.config import Settings

    with FakeDiscord() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.base)
        monkeypatch.setenv("DIGESTBOT_DISCORD_TOKEN", "token")
        monkeypatch.setenv("DIGESTBOT_DATABASE_URL", f"sqlite:///{tmp_path / 'd.db'}")
        monkeypatch.setenv("DIGESTBOT_INDEX_DIR", str(tmp_path / "index"))
        assert set(build().adapters) == {"console", "discord"}
        assert main(["discord", "sync", "--guild", "77"]) == 0
        assert "synced" in capsys.readouterr().out
        assert any(m == "PUT" and "/guilds/77/commands" in p for m, p, _ in fake.calls)
    monkeypatch.delenv("DIGESTBOT_DISCORD_TOKEN")
    assert build(settings=Settings()).discord is None


def test_readme_invite_permissions_are_exactly_what_the_bot_needs():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[3] / "docs" / "discord.md").read_text()
    needed = discord.Permissions(
        view_channel=True,
        send_messages=True,
        send_messages_in_threads=True,
        create_public_threads=True,
        embed_links=True,
        attach_files=True,
        read_message_history=True,
    )
    assert f"permissions={needed.value}" in readme and "scope=bot%20applications.commands" in readme


async def test_mass_mentions_in_user_topics_never_ping(app, group):
    """A topic '@everyone @here <@&1>' shared with `list public:` must not ping anyone.
    Breaks seen red: the follow-up sent without allowed_mentions; embed text not passed through
    escape_mentions -> a bare '@everyone' in the shared list."""
    await call(group, "subscribe", FakeInteraction(), text="@everyone @here <@&1> news")
    i = await call(group, "list", FakeInteraction(), public=True)
    assert i.sent[0]["ephemeral"] is False
    mentions = i.sent[0]["allowed_mentions"]
    assert mentions.everyone is False and mentions.roles is False and mentions.users is False
    shown = i.text().replace("@\u200beveryone", "").replace("@\u200bhere", "")
    assert "@everyone" not in shown and "@here" not in shown, i.text()
