"""More of the Discord app against the strict fake: the command JSON sync sends, help in
Discord's syntax, admin rules, sync records, error replies, view memory, spoofing, forums.

Breaks tried (each turns a test here red): `digest mode:now` without the admin check; removing
`view.stop()` (views pile up in discord.py's store); dropping the reply guard (a refused
follow-up leaves the user with nothing); no bidi/zero-width stripping or token escaping; 50008
and 50024 classified as transient (retried for ever instead of pausing); a 101-character
description, a required option after an optional one, 26 subcommands (command_problems)."""

from __future__ import annotations

import copy
import logging
import re

import discord
import pytest

from bot.adapters.discord import sync
from bot.adapters.discord.command_rules import command_problems
from bot.adapters.discord.embeds import card_embed, plain, safe
from bot.commands.replies import Card
from bot.runtime.effects import EffectExecutor
from bot.runtime.runner import DigestRunner
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from tests.fakes.discord import FakeDiscord
from tests.support.discord_app import (
    DAY,
    SERVER,
    button,
    discord_app_bot,  # noqa: F401 - the `bot` fixture
    dispatch,
    embed_text,
    press,
    slash,
)


async def _synced(bot) -> list[dict]:
    """/papers as synced (the reading group's /reading-group is checked on its own)."""
    await sync.sync_global(bot.client.tree, bot.app.channels.notes)
    return [c for c in bot.fake.synced[None] if c["name"] == "papers"]


async def test_the_command_json_sync_sends_follows_discords_rules(bot):
    (papers,) = await _synced(bot)  # the fake answers 400 if command_problems finds anything
    assert command_problems([papers]) == []
    (reading,) = [c for c in bot.fake.synced[None] if c["name"] == "reading-group"]
    assert command_problems(bot.fake.synced[None]) == []
    assert {o["name"] for o in reading["options"]} == {
        "show",
        "on",
        "off",
        "history",
        "export",
        "nominate",
        "vote",
    }
    assert (papers["name"], papers["contexts"], papers["integration_types"]) == (
        "papers",
        [0, 1],
        [0],
    )
    subs = {o["name"]: o for o in papers["options"]}
    assert len(subs) <= 25 and subs["me"]["type"] == 2
    assert {o["name"] for o in subs["me"]["options"]} >= {"subscribe", "schedule", "list", "up"}
    search = [(o["name"], o.get("required", False)) for o in subs["search"]["options"]]
    assert search[0] == ("query", True) and all(not r for _, r in search[1:])
    kinds = next(o for o in subs["subscribe"]["options"] if o["name"] == "kind")["choices"]
    assert [c["value"] for c in kinds] == ["topic", "author", "like"]
    auto = {o["name"] for o in subs["schedule"]["options"] if o.get("autocomplete")}
    assert auto == {"timezone", "days"}
    assert next(o for o in subs["up"]["options"])["autocomplete"] is True


async def test_command_rules_catch_what_discord_refuses(bot):
    (good,) = await _synced(bot)
    breaks = {
        "description": lambda c: c["options"][0].update(description="x" * 101),
        "before optional": lambda c: c["options"][1]["options"].append(
            {"type": 3, "name": "late", "description": "d", "required": True}
        ),
        "over 25 options": lambda c: c["options"].extend(
            {"type": 1, "name": f"x{n}", "description": "d"} for n in range(4)
        ),
        "name": lambda c: c.update(name="Papers"),
        "autocomplete": lambda c: next(o for o in c["options"] if o["name"] == "subscribe")[
            "options"
        ][1].update(autocomplete=True),  # `kind`, which has choices
        "nested": lambda c: c["options"][-1]["options"].append(
            {"type": 2, "name": "deep", "description": "d", "options": []}
        ),
    }
    for expected, mutate in breaks.items():
        bad = copy.deepcopy(good)
        mutate(bad)
        problems = command_problems([bad])
        assert any(expected in p for p in problems), (expected, problems)


async def test_help_and_hints_use_discords_option_names(bot):
    await dispatch(bot.client, slash("help", "h1"))
    text = embed_text(bot.fake.followups["h1"][0])
    assert "option name: on:" in text and "option quiet on" not in text
    (papers,) = await _synced(bot)
    options = {o["name"]: {x["name"] for x in o.get("options", [])} for o in papers["options"]}
    for span in re.findall(r"/papers ([a-z-]+)((?: \[?[a-z]+:)*)", text):
        name, opts = span
        assert name in options and set(re.findall(r"([a-z]+):", opts)) <= options[name], span
    await dispatch(bot.client, slash("digest", "h2", mode="preview"))  # follows nothing yet
    assert "/papers subscribe text:<topic>" in embed_text(bot.fake.followups["h2"][0])


async def test_digest_now_follows_the_admin_only_rule(bot):
    asked = []

    async def deliver(ref, day):
        asked.append(ref)
        return "posted"

    bot.client.deps.effects = EffectExecutor(bot.app.channels, deliver)
    bot.app.channels.follows.add(SERVER, SubscriptionKind.TOPIC, "diffusion models")
    await dispatch(bot.client, slash("digest", "d1", perms=0, mode="now"))
    assert "Only channel admins" in embed_text(bot.fake.followups["d1"][0]) and asked == []
    await dispatch(bot.client, slash("digest", "d2", perms=0, mode="preview"))
    assert "📚" in embed_text(bot.fake.followups["d2"][0])  # previews stay open to everyone
    await dispatch(bot.client, slash("digest", "d3", mode="now"))
    assert asked == [SERVER]


async def test_sync_records_server_copies_and_warns_until_removed(bot, caplog):
    kv, tree = bot.app.channels.notes, bot.client.tree
    await sync.sync_guild(tree, kv, 77, remove=False)
    assert bot.fake.synced["77"][0]["name"] == "papers"
    with caplog.at_level(logging.WARNING):
        assert await bot.client.sync_if_changed()  # what `digestbot run` does at start
    assert "digestbot discord sync --guild 77 --remove" in caplog.text
    await sync.sync_guild(tree, kv, 77, remove=True)
    assert bot.fake.synced["77"] == [] and sync.guild_copies(kv) == {}
    assert sync.duplicate_warning(kv) is None
    assert [c["name"] for c in bot.fake.synced[None]] == ["papers", "reading-group"]


async def test_a_refused_reply_reaches_the_user_as_a_private_error(bot, caplog):
    refused = (400, {}, {"message": "Invalid Form Body", "code": 50035})
    bot.fake.fail_followups["e1"].append(refused)
    with caplog.at_level(logging.ERROR):
        await dispatch(bot.client, slash("topics", "e1"))
    (sorry,) = bot.fake.followups["e1"]
    assert "went wrong sending" in sorry["content"] and sorry["flags"] & 64
    assert "Discord reply failed" in caplog.text or "command failed" in caplog.text
    bot.app.channels.follows.add(SERVER, SubscriptionKind.TOPIC, "diffusion models")
    runner = DigestRunner(Deliveries(bot.app.papers, "w1"), {"discord": bot.client.poster})
    await runner.run_channel(bot.app.store.channels.get(SERVER).id, DAY)
    message = next(m for m in bot.fake.arrived("111") if button(m, "More like this"))
    bot.fake.fail_followups["e2"].append(refused)
    await dispatch(bot.client, press(bot.fake, message, button(message, "More like this"), "e2"))
    (sorry,) = bot.fake.followups["e2"]
    assert "went wrong sending" in sorry["content"]


async def test_posted_digests_leave_no_views_in_memory(bot):
    store = bot.client._connection._view_store
    for n in range(9):
        ref = ChannelRef("discord", str(300 + n), "77")
        bot.fake.channels.add(ref.channel_id)  # Discord refuses channels the guild lacks (10003)
        bot.app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
        runner = DigestRunner(Deliveries(bot.app.papers, "w1"), {"discord": bot.client.poster})
        assert (await runner.run_channel(bot.app.store.channels.get(ref).id, DAY)).startswith(
            "posted"
        )
    await dispatch(bot.client, slash("search", "m1", query="diffusion models"))
    assert len(store._views) == 0 and len(store._synced_message_views) == 0
    from bot.adapters.discord.buttons import BUTTONS

    assert len(store._dynamic_items) == len(BUTTONS)  # presses are still routed (vote tests)


def test_paper_text_cannot_spoof_mention_or_link():
    hostile = Card(
        paper_id="syn-1\u202e",
        title="\u202egnp.exe **bold** <@123456789012345678> @everyone",
        url="https://arxiv.org/abs/1",
        authors="Mallory\u200b Eve",
        venue="<#123456789012345678>",
        snippet="see </papers:1234567890> at <t:1700000000:R> a\u200bb \u2066x\u2069",
        why="<@&123456789012345678> [x](https://evil.example)",
    )
    d = card_embed(hostile).to_dict()
    shown = [d["title"], d["description"], d["footer"]["text"], *(f["value"] for f in d["fields"])]
    for text in shown:
        assert not re.search("[\u202a-\u202e\u2066-\u2069\u200e\u200f\ufeff]", text), text
        assert not re.search(r"(?<!\\)<(?:#|/|t:|@)", text), text  # no live token left
        assert "@everyone" not in text.replace("@\u200beveryone", "")
    assert "\\*\\*bold\\*\\*" in d["title"] and "ab" in d["description"]
    assert plain("👩\u200d🔬 a\u200db") == "👩\u200d🔬 ab"  # emoji keep their joiner
    assert safe("\\<#1>") == "\\\\\\<#1>"  # an escaped backslash cannot re-open the token


async def test_a_channel_without_threads_gets_its_digest_inline(bot):
    """50024 (threads impossible) degrades to posting inline; break: treat it as transient -> red."""
    bot.fake.no_threads.add("111")
    bot.app.channels.follows.add(SERVER, SubscriptionKind.TOPIC, "diffusion models")
    bot.app.channels.settings.set_option(SERVER, "threads", True)
    runner = DigestRunner(Deliveries(bot.app.papers, "w1"), {"discord": bot.client.poster})
    outcome = await runner.run_channel(bot.app.store.channels.get(SERVER).id, DAY)
    assert outcome.startswith("posted") and not bot.app.store.channels.get(SERVER).paused
    delivered = bot.fake.messages["111"]
    assert len(delivered) >= 2  # header plus the papers, all in the channel itself


@pytest.mark.parametrize(
    "setup, reason",
    [(lambda f: f.forums.add("111"), "forum|non-text|50008")],
)
async def test_forums_pause_with_the_reason(bot, setup, reason):
    setup(bot.fake)
    bot.app.channels.follows.add(SERVER, SubscriptionKind.TOPIC, "diffusion models")
    bot.app.channels.settings.set_option(SERVER, "threads", True)
    runner = DigestRunner(Deliveries(bot.app.papers, "w1"), {"discord": bot.client.poster})
    outcome = await runner.run_channel(bot.app.store.channels.get(SERVER).id, DAY)
    ch = bot.app.store.channels.get(SERVER)
    assert "paused" in outcome and ch.paused and re.search(reason, ch.paused_reason)
    await dispatch(bot.client, slash("list", "f1"))  # the reason is shown where people look
    assert ch.paused_reason[:40] in embed_text(bot.fake.followups["f1"][0])


async def test_readme_discord_section_shows_the_real_commands_and_options(bot):
    from pathlib import Path

    section = (Path(__file__).resolve().parents[3] / "docs" / "discord.md").read_text()
    section = re.sub(r"```.*?```", "", section, flags=re.S)
    (papers,) = await _synced(bot)
    options = {o["name"]: {x["name"] for x in o.get("options", [])} for o in papers["options"]}
    checked = 0
    for span in re.findall(r"`([^`]+)`", section):
        words = span.removeprefix("/papers ").removeprefix("me ").split()
        if not words or words[0] not in options or span.startswith("digestbot"):
            continue
        used = set(re.findall(r"\[?([a-z]+):", span))
        assert used <= options[words[0]], (span, options[words[0]])
        checked += 1
    assert checked >= 20 and "option threads on`" not in section and "command:" not in section


def test_cli_removes_a_server_copy(tmp_path, monkeypatch, capsys):
    from bot.cli.main import main

    with FakeDiscord() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.base)
        monkeypatch.setenv("DIGESTBOT_DISCORD_TOKEN", "token")
        monkeypatch.setenv("DIGESTBOT_DATABASE_URL", f"sqlite:///{tmp_path / 'd.db'}")
        monkeypatch.setenv("DIGESTBOT_INDEX_DIR", str(tmp_path / "index"))
        assert main(["discord", "sync", "--guild", "77"]) == 0
        assert main(["discord", "sync"]) == 0
        out = capsys.readouterr().out
        assert "synced 2 command(s) to server 77" in out and "--guild 77 --remove" in out
        assert main(["discord", "sync", "--guild", "77", "--remove"]) == 0
        assert "removed the /papers copy from server 77" in capsys.readouterr().out
        assert fake.synced["77"] == [] and fake.synced[None][0]["name"] == "papers"
        assert main(["discord", "sync", "--remove"]) == 2  # needs --guild: one error line


def test_ten_maximal_papers_still_fit_one_message():
    """Titles, abstracts and reasons at their limits: shortened until Discord would accept them."""
    from bot.adapters.discord.embeds import render_one
    from bot.adapters.discord.limits import message_problems
    from bot.commands.replies import Action, Reply
    from tests.fakes.discord_limits import body as payload

    cards = tuple(
        Card(
            paper_id=f"p{n}",
            title="T" * 1000,
            url=None,
            authors="A" * 300,
            venue="V",
            snippet="s" * 20_000,
            why="w" * 2000,
        )
        for n in range(9)
    )
    reply = Reply(
        text="x" * 5000,
        title="t" * 500,
        cards=cards,
        actions=(Action("page", "Next ▶", "0123456789abcdef:2", page=2),),
    )
    assert message_problems(payload(render_one(reply))) == []


async def test_hostile_paper_text_arrives_neutralised(bot):
    """A paper whose title and abstract try RTL spoofing, live tokens and pings, posted for real."""
    from digest.ingest.parse import make_record

    hostile = make_record(
        source="jsonl",
        id="evil-1",
        venue="SynthConf 2025",
        year=2025,
        title="Diffusion models \u202eexe.gnp <@123456789012345678> **@everyone**",
        abstract="Diffusion models. See <#123456789012345678> and </papers:1234567890> at "
        "<t:1700000000:R>; diffu\u200bsion \u2066models\u2069 [x](https://evil.example).",
        authors=["Mallory\u200b", "Eve \u202e"],
    )
    bot.app.store.papers.upsert([hostile])
    bot.app.channels.follows.add(SERVER, SubscriptionKind.TOPIC, "diffusion models")
    runner = DigestRunner(Deliveries(bot.app.papers, "w1"), {"discord": bot.client.poster})
    await runner.run_channel(bot.app.store.channels.get(SERVER).id, DAY)
    shown = "\n".join(embed_text(m) for m in bot.fake.arrived("111"))
    assert "exe.gnp" in shown and not bot.fake.rejected
    assert not re.search(
        "[\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff]", shown.replace("@\u200b", "@")
    )
    assert not re.search(r"(?<!\\)<(?:#|/|t:|@)", shown) and "**" not in shown
    assert "TL;DR: " in shown  # the paper's TL;DR arrives, neutralised like the rest
