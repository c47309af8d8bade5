"""The Discord app as users meet it: slash commands, buttons and autocomplete fed to discord.py's
own interaction handler, answered against the strict fake (which answers 400 where Discord would).

Breaks tried (each turns a test here red): the page callback editing in only the first rendered
message; the pager re-parsing `author:Ada Lovelace` from text; votes stored on the pressed
channel (thread / DM) instead of the digest's; DM commands on a DM channel row needing Manage
Channels; `/papers me` keyed by server; typed values flattened into command text; autocomplete
values cut to 100 characters."""

from __future__ import annotations

import math

import pytest

from bot.runtime.runner import DigestRunner
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from digest.rank.ranker import Filters
from tests.support.discord_app import (
    DAY,
    SERVER,
    autocomplete,
    button,
    callbacks,
    discord_app_bot,  # noqa: F401 - the `bot` fixture
    dispatch,
    embed_text,
    press,
    slash,
)


def footers(message: dict) -> list[str]:
    """Paper ids shown on a search message (each paper embed's footer is its id)."""
    return [e["footer"]["text"] for e in message["embeds"][1:]]


async def test_pager_walks_the_whole_result_set_with_a_multi_word_author(bot):
    """Next ▶ edits in the next page (papers and buttons) until the last; no paper lost or repeated."""
    await dispatch(
        bot.client, slash("search", "t0", query="diffusion models", author="Ada Lovelace")
    )
    view = bot.app.papers.search("diffusion models", Filters(author="Ada Lovelace"), 1, 1000)
    expected = [h.paper_id for h in view.result.hits]
    assert len(expected) > 8  # at least three pages
    message, seen, pages = bot.fake.followups["t0"][0], [], 0
    while True:
        pages += 1
        assert f"page {pages} of {math.ceil(len(expected) / 4)}" in embed_text(message)
        seen += footers(message)
        nxt = button(message, "Next ▶")
        if nxt is None:
            break
        token = f"t{pages}"
        await dispatch(bot.client, press(bot.fake, message, nxt, token))
        assert bot.fake.acks[token][0]["type"] == 6 and bot.fake.edits[token]
        assert callbacks(bot.fake, token) == 1
        message = bot.fake.originals[token]  # the same message, edited in place
    assert seen == expected and pages == math.ceil(len(expected) / 4)
    assert not bot.fake.rejected
    prev = button(message, "◀ Prev")
    await dispatch(bot.client, press(bot.fake, message, prev, "back"))
    assert footers(bot.fake.originals["back"]) == expected[4 * (pages - 2) : 4 * (pages - 1)]


def test_text_pager_keeps_a_quoted_author_whole(app):
    """Slack and the console page with command text: the author must survive the round trip."""
    from tests.commands.test_commands import ctx

    reply = app.commands.handle('search diffusion models author:"Ada Lovelace"', ctx())
    nxt = next(a for a in reply.actions if a.label.startswith("Next"))
    page2 = app.commands.handle(nxt.value, ctx())
    view = app.papers.search("diffusion models", Filters(author="Ada Lovelace"), 2, 5)
    assert [c.paper_id for c in page2.cards] == [h.paper_id for h in view.result.hits]
    assert page2.title == reply.title == "🔎 diffusion models"  # no stray 'Lovelace' query word


async def _threaded_digest(bot) -> tuple[int, str]:
    bot.app.channels.follows.add(SERVER, SubscriptionKind.TOPIC, "diffusion models")
    bot.app.channels.settings.set_option(SERVER, "threads", True)
    ch = bot.app.store.channels.get(SERVER)
    runner = DigestRunner(Deliveries(bot.app.papers, "w1"), {"discord": bot.client.poster})
    assert await runner.run_channel(ch.id, DAY) == "posted 5 papers"
    thread = next(c for c in bot.fake.threads)
    return ch.id, thread


async def test_vote_buttons_in_a_digest_thread_vote_on_the_channel(bot):
    channel_id, thread = await _threaded_digest(bot)
    item = bot.fake.arrived(thread)[0]
    up = button(item, "👍")
    await dispatch(bot.client, press(bot.fake, item, up, "v1", parent="111"))
    votes = bot.app.store.channels.feedback(channel_id)
    assert [(v.paper_id, v.value) for v in votes] == [(up.split(":", 2)[2], 1)]
    assert bot.app.store.channels.get(ChannelRef("discord", thread, "77")) is None
    assert "noted" in embed_text(bot.fake.followups["v1"][0]) and callbacks(bot.fake, "v1") == 1


async def test_vote_buttons_in_a_dm_digest_vote_on_the_personal_digest(bot):
    mine = bot.app.channels.personal_ref("discord", "42")
    bot.app.channels.follows.add(mine, SubscriptionKind.TOPIC, "diffusion models")
    ch = bot.app.store.channels.get(mine)
    runner = DigestRunner(Deliveries(bot.app.papers, "w1"), {"discord": bot.client.poster})
    assert await runner.run_channel(ch.id, DAY) == "posted 5 papers"
    dm = next(c for c in bot.fake.messages if c.startswith("9"))
    message = next(m for m in bot.fake.arrived(dm) if button(m, "👎"))
    down = button(message, "👎")
    await dispatch(bot.client, press(bot.fake, message, down, "v2", guild=None))
    assert [v.value for v in bot.app.store.channels.feedback(ch.id)] == [-1]
    assert [c.ref for c in bot.app.store.channels.all() if c.ref.workspace == "dm"] == [mine]


async def test_one_personal_digest_from_every_server_and_the_dm(bot):
    """`/papers me` from two servers and plain commands in the DM reach one digest."""
    await dispatch(bot.client, slash("me subscribe", "p1", guild="77", perms=0, text="RLHF"))
    await dispatch(bot.client, slash("me subscribe", "p2", guild="88", perms=0, text="diffusion"))
    await dispatch(
        bot.client, slash("subscribe", "p3", channel="942", guild=None, perms=0, text="GNNs")
    )
    assert "Now following topic 'GNNs'" in embed_text(bot.fake.followups["p3"][0])
    mine = [c for c in bot.app.store.channels.all() if c.ref.channel_id == "@42"]
    assert len(mine) == 1
    assert [s.text for s in bot.app.channels.subscriptions(mine[0].ref)] == [
        "RLHF",
        "diffusion",
        "GNNs",
    ]
    assert bot.app.store.channels.get(ChannelRef("discord", "942", "dm")) is None
    await dispatch(bot.client, slash("list", "p4", channel="942", guild=None, perms=0))
    assert "Your personal digest" in embed_text(bot.fake.followups["p4"][0])


def test_older_per_server_personal_digests_are_merged_into_one(app):
    older, newer = ChannelRef("discord", "@7", "77"), ChannelRef("discord", "@7", "88")
    app.channels.follows.add(older, SubscriptionKind.TOPIC, "RLHF")
    app.channels.follows.add(newer, SubscriptionKind.AUTHOR, "Ada Lovelace")
    from tests.support.migration_rows import merge_personal_digests

    merge_personal_digests(app.store.engine)
    assert app.channels.personal_ref("discord", "7") == older
    assert [s.text for s in app.channels.subscriptions(older)] == ["RLHF", "Ada Lovelace"]
    extra = app.store.channels.get(ChannelRef("discord", "@7", "88"))
    assert extra.paused and "merged" in extra.paused_reason
    assert not app.store.channels.get(older).paused


async def test_typed_values_never_leak_into_command_syntax(bot, monkeypatch):
    await dispatch(bot.client, slash("subscribe", "k1", text="author:Ada Lovelace", kind="topic"))
    subs = bot.app.channels.subscriptions(SERVER)
    assert [(s.kind.value, s.text) for s in subs] == [("topic", "author:Ada Lovelace")]
    asked = []
    real = bot.app.papers.search

    def spy(query, filters=None, page=1, per_page=10):
        asked.append((query, filters))
        return real(query, filters, page, per_page)

    monkeypatch.setattr(bot.app.papers, "search", spy)
    await dispatch(bot.client, slash("search", "k2", query='a "b', author='O"Brien'))
    assert asked[0] == ('a "b', Filters(author='O"Brien'))
    await dispatch(
        bot.client, slash("schedule", "k3", time="07:30", timezone="Asia/Tokyo", days="mon,wed")
    )
    ch = bot.app.store.channels.get(SERVER)
    assert (ch.digest_time, ch.timezone, ch.weekdays) == ("07:30", "Asia/Tokyo", "mon,wed")


def _choices(bot, token: str) -> list[dict]:
    (ack,) = bot.fake.acks[token]
    assert ack["type"] == 8  # an autocomplete result
    return ack["data"]["choices"]


async def test_autocomplete_for_votes_timezones_days_and_long_topics(bot):
    await dispatch(bot.client, autocomplete("up", "a1", "paper", "syn-rl-3"))
    assert _choices(bot, "a1")[0]["value"] == "syn-rl-3"
    await dispatch(bot.client, autocomplete("down", "a2", "paper", "sparse autoencoders"))
    assert all(c["value"].startswith("syn-sae") for c in _choices(bot, "a2")[:3])
    await dispatch(bot.client, autocomplete("schedule", "a3", "timezone", "berl", time="09:00"))
    assert _choices(bot, "a3")[0]["value"] == "Europe/Berlin"
    await dispatch(bot.client, autocomplete("schedule", "a4", "days", "week", time="09:00"))
    assert [c["value"] for c in _choices(bot, "a4")][:3] == ["week", "weekdays", "weekends"]
    topic = ("sparse autoencoders for interpretable features " * 5)[:200].strip()
    bot.app.channels.follows.add(SERVER, SubscriptionKind.TOPIC, topic)
    await dispatch(bot.client, autocomplete("unsubscribe", "a5", "item", "interpretable"))
    (choice,) = _choices(bot, "a5")
    await dispatch(bot.client, slash("unsubscribe", "a6", item=choice["value"]))
    assert f"Stopped following '{topic[:40]}" in embed_text(bot.fake.followups["a6"][0])
    assert bot.app.channels.subscriptions(SERVER) == []


async def test_pager_buttons_from_older_versions_answer_instead_of_failing(bot):
    cid = "dv:p:search graphs page:2"
    row = {"type": 1, "components": [{"type": 2, "style": 2, "label": "Next ▶", "custom_id": cid}]}
    old = bot.fake._reply_message({"embeds": [{"title": "🔎 x"}], "components": [row]})
    await dispatch(bot.client, press(bot.fake, old, cid, "o1"))
    (ack,) = bot.fake.acks["o1"]
    assert ack["type"] == 4 and "older search" in ack["data"]["content"]


async def test_votes_in_a_thread_that_gets_digests_itself_stay_there(bot):
    """A forum post subscribed as a channel: its digest's buttons vote on it, not on the forum."""
    post = ChannelRef("discord", "6001", "77")
    bot.app.channels.follows.add(post, SubscriptionKind.TOPIC, "diffusion models")
    ch = bot.app.store.channels.get(post)
    runner = DigestRunner(Deliveries(bot.app.papers, "w1"), {"discord": bot.client.poster})
    assert await runner.run_channel(ch.id, DAY) == "posted 5 papers"
    message = next(m for m in bot.fake.arrived("6001") if button(m, "👍"))
    await dispatch(bot.client, press(bot.fake, message, button(message, "👍"), "f1", parent="555"))
    assert [v.value for v in bot.app.store.channels.feedback(ch.id)] == [1]
    assert bot.app.store.channels.get(ChannelRef("discord", "555", "77")) is None


@pytest.mark.parametrize("kind", [11, 12])  # public and private threads
async def test_commands_typed_in_a_thread_act_on_its_parent_channel(bot, kind):
    """Break seen red: context() keyed by i.channel_id -> the thread gets its own channel row
    and the parent channel follows nothing."""

    def in_thread(path, token, **values):
        payload = slash(path, token, channel="7001", parent=SERVER.channel_id, **values)
        payload["channel"]["type"] = kind
        return payload

    await dispatch(bot.client, in_thread("subscribe", "th1", text="graph neural networks"))
    assert "Now following" in embed_text(bot.fake.followups["th1"][0])
    assert [s.text for s in bot.app.channels.subscriptions(SERVER)] == ["graph neural networks"]
    await dispatch(bot.client, in_thread("list", "th2"))
    assert "graph neural networks" in embed_text(bot.fake.followups["th2"][0])
    assert bot.app.store.channels.get(ChannelRef("discord", "7001", "77")) is None
    assert not bot.fake.rejected


async def test_a_thread_set_up_as_its_own_channel_keeps_its_commands(bot):
    """A forum post subscribed as a channel before: its commands stay on it."""
    post = ChannelRef("discord", "6001", "77")
    bot.app.channels.follows.add(post, SubscriptionKind.TOPIC, "diffusion models")
    await dispatch(bot.client, slash("list", "fp1", channel="6001", parent="555"))
    assert "diffusion models" in embed_text(bot.fake.followups["fp1"][0])
    assert bot.app.store.channels.get(ChannelRef("discord", "555", "77")) is None


def test_stored_searches_expire_after_a_day(app):
    """Break seen red: SearchPages.keep without the range delete -> the day-old search stays
    stored."""
    from datetime import UTC, datetime
    from types import SimpleNamespace

    import time_machine

    from bot.adapters.discord.buttons import Page
    from bot.adapters.discord.interact import with_pager
    from bot.commands.replies import Action, Reply
    from digest.papers.pages import PREFIX as PAGER_KEY

    deps = SimpleNamespace(pages=app.pages)
    reply = Reply(text="x", actions=(Action("page", "Next ▶", "search x page:2", page=2),))

    def store_at(when: datetime, query: str) -> str:
        with time_machine.travel(when, tick=False):
            return with_pager(deps, reply, {"query": query}).actions[0].value.split(":")[0]

    old = store_at(datetime(2026, 12, 1, 9, 0, tzinfo=UTC), "graphs")
    mid = store_at(datetime(2026, 12, 1, 20, 0, tzinfo=UTC), "trees")
    assert app.store.kv.get(PAGER_KEY + old) is not None  # 11 hours on: still pages
    new = store_at(datetime(2026, 12, 2, 10, 30, tzinfo=UTC), "graphs")
    assert app.store.kv.get(PAGER_KEY + old) is None  # over a day old: gone
    assert app.store.kv.get(PAGER_KEY + mid) and app.store.kv.get(PAGER_KEY + new)
    assert Page.__discord_ui_compiled_template__.fullmatch(f"dv:p:{new}:2")  # a button id
