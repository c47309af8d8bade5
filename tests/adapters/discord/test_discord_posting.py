"""Discord digests through the runner and discord.py's HTTP client against a local fake REST API."""

import asyncio
import json
from datetime import date, timedelta

import discord
import pytest

from bot.adapters.discord.poster import DiscordPoster
from bot.commands.replies import digest_reply
from bot.runtime.runner import DigestRunner
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from tests.fakes.discord import FakeDiscord

DAY = date(2026, 12, 1)
RATE_LIMITED = (
    429,
    {"Via": "1.1 google"},
    {"message": "You are being rate limited.", "retry_after": 0.05, "global": False},
)


@pytest.fixture
def fake(monkeypatch):
    with FakeDiscord() as f:
        monkeypatch.setattr(discord.http.Route, "BASE", f.base)
        yield f


def run(app, fake, coro_factory):
    """Log a discord.py client in against the fake (REST only, no gateway) and run ``coro_factory``."""

    async def go():
        client = discord.Client(intents=discord.Intents.none())
        await client.login("fake-token")
        try:
            poster = DiscordPoster(client)
            return await coro_factory(poster)
        finally:
            await client.close()

    return asyncio.run(go())


def channel(app, cid="111", topic="diffusion models"):
    ref = ChannelRef("discord", cid, "77")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, topic)
    return app.store.channels.get(ref)


def runner(app, poster, worker="w1"):
    return DigestRunner(Deliveries(app.papers, worker), {"discord": poster})


def test_digest_arrives_as_embeds_with_buttons_and_no_mentions(app, fake):
    ch = channel(app)
    assert run(app, fake, lambda p: runner(app, p).run_channel(ch.id, DAY)) == "posted 5 papers"
    (post,) = fake.posts("111")  # five papers fit one message with the header
    assert len(post["embeds"]) == 6 and post["embeds"][0]["title"].startswith("📚 Papers for")
    assert post["allowed_mentions"] == {"parse": []}
    assert len(post["components"]) == 5 and post["components"][0]["components"][0][
        "custom_id"
    ].startswith("dv:u:")
    assert post["embeds"][-1]["footer"]["text"].endswith(f" · digest-{ch.id}-2026-12-01#0")


def test_threaded_digest_posts_papers_in_a_thread(app, fake):
    ch = channel(app)
    app.channels.settings.set_option(ch.ref, "threads", True)
    assert run(app, fake, lambda p: runner(app, p).run_channel(ch.id, DAY)) == "posted 5 papers"
    assert any(p.endswith("/threads") for _, p, _ in fake.calls)


def test_rate_limit_with_via_header_is_retried_by_discord_py(app, fake):
    ch = channel(app)
    fake.fail["111"] = [RATE_LIMITED]
    assert run(app, fake, lambda p: runner(app, p).run_channel(ch.id, DAY)) == "posted 5 papers"
    assert len(fake.posts("111")) == 2 and len(fake.messages["111"]) == 1


@pytest.mark.parametrize(
    ("status", "reason"),
    [(403, "missing access"), (404, "channel not found")],
)
def test_forbidden_and_not_found_pause_only_that_channel(app, fake, status, reason):
    bad, good = channel(app, "222"), channel(app, "333")
    fake.fail["222"] = [
        (
            status,
            {},
            {"message": "Missing Access" if status == 403 else "Unknown Channel", "code": 50001},
        )
    ]

    async def both(p):
        r = runner(app, p)
        return await r.run_channel(bad.id, DAY), await r.run_channel(good.id, DAY)

    first, second = run(app, fake, both)
    assert "channel paused" in first and second == "posted 5 papers"
    assert reason in app.store.channels.by_id(bad.id).paused_reason


def test_a_paused_channels_owner_is_told_by_dm(app, fake):
    """The bot lost access (403/50001): the channel pauses and whoever set it up hears so by
    DM, with how to restart it (issue 23: "tell someone when a channel is paused"); a failure
    that is retried tells nobody. Breaks that turn this red: _send() not calling _tell_owner();
    _tell_owner() sending to the channel (refused again) instead of the owner's DMs."""
    bad = channel(app, "222")
    app.channels.claim(bad.ref, "42", "lab-feed")
    retried = channel(app, "333")
    app.channels.claim(retried.ref, "42", "other")
    fake.fail["222"] = [(403, {}, {"message": "Missing Access", "code": 50001})]
    fake.fail["333"] = [RATE_LIMITED] * 10

    async def both(p):
        r = runner(app, p)
        return await r.run_channel(bad.id, DAY), await r.run_channel(retried.id, DAY)

    first, second = run(app, fake, both)
    assert "channel paused" in first and "retrying" in second
    (told,) = fake.posts("942")  # user 42's DMs
    text = json.dumps(told, ensure_ascii=False)
    assert "Digests for #lab-feed are paused" in text and "/papers resume" in text


def test_closed_dms_pause_the_personal_digest_with_the_reason(app, fake):
    ch = channel(app, "@42")
    fake.fail["942"] = [(403, {}, {"message": "Cannot send messages to this user", "code": 50007})]
    assert "channel paused" in run(app, fake, lambda p: runner(app, p).run_channel(ch.id, DAY))
    from bot.commands import Context

    reply = app.commands.handle(
        "me list", Context(ref=ChannelRef("discord", "111", "77"), user="42", dm=ch.ref)
    )
    assert "Cannot send messages to this user" in reply.text


def crash_midway(app, poster, ch, sent: int, confirmed: int):
    """A worker that posted messages [0, sent) and confirmed [0, confirmed), then died."""
    dead = Deliveries(app.papers, "host-1", lease=timedelta(seconds=0.3))
    claim = dead.claim(ch, DAY)
    reply = digest_reply(claim.digest)
    plan = dead.plan(claim, poster.plan(reply))

    async def go():
        parent = None
        for m in plan[:sent]:
            dead.sending(claim, m.position)
            ref = await poster.post_part(
                ch.ref, reply, m.position, claim.part_key(m.position), parent
            )
            parent = parent or ref
            if m.position < confirmed:
                dead.confirm(claim, m.position, ref)
        await asyncio.sleep(0.4)  # the lease lapses

    return claim, plan, go()


def test_crash_after_posting_is_found_in_history_and_not_reposted(app, fake):
    ch = channel(app)

    async def scenario(p):
        _, _, crashed = crash_midway(app, p, ch, sent=1, confirmed=0)
        await crashed
        return await runner(app, p, "host-2").recover()

    assert run(app, fake, scenario) == ["posted 5 papers"]
    assert len(fake.arrived("111")) == 1


def test_a_threaded_digest_cut_short_is_completed_with_every_paper_once(app, fake):
    """Seen before: 20 of 25 papers lost when recovery found the header and recorded the rest."""
    ch = channel(app)
    app.channels.settings.set_option(ch.ref, "threads", True)
    ch = app.store.channels.by_id(ch.id)

    async def scenario(p):
        claim, plan, crashed = crash_midway(app, p, ch, sent=3, confirmed=2)
        await crashed
        return claim, plan, await runner(app, p, "host-2").recover()

    claim, plan, outcome = run(app, fake, scenario)
    assert outcome == ["posted 5 papers"] and len(plan) == 6
    header = fake.arrived("111")
    thread = fake.arrived(header[0]["id"])
    assert len(header) == 1 and len(thread) == 5
    shown = [e["footer"]["text"].split(" · ")[0] for m in thread for e in m["embeds"]]
    assert sorted(shown) == sorted(i.paper_id for i in claim.delivery.items)


def test_a_link_discord_refuses_is_dropped_and_a_forum_channel_pauses(app, fake):
    ch, forum = channel(app), channel(app, "444")
    fake.forums.add("444")
    long_link = "https://example.org/" + "a" * 600
    app.store.papers.upsert([])
    from sqlalchemy import update
    from sqlalchemy.orm import Session

    from digest.store.schema import PaperRow

    with Session(app.store.engine) as s:
        s.execute(update(PaperRow).values(code_url=long_link))
        s.commit()

    async def both(p):
        r = runner(app, p)
        return await r.run_channel(ch.id, DAY), await r.run_channel(forum.id, DAY)

    first, second = run(app, fake, both)
    assert first == "posted 5 papers" and "channel paused" in second
    for m in fake.arrived("111"):
        for row in m["components"]:
            assert all(len(b.get("url", "")) <= 512 for b in row["components"])
    assert "50008" in app.store.channels.by_id(forum.id).paused_reason
