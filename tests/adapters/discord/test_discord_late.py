"""Discord's interaction tokens expire 15 minutes after the interaction: a follow-up or edit
after that gets 401 / 50027 Invalid Webhook Token (the fake's clock, moved on by ``advance``).

Repro: `digest mode:now` whose posting outlasted the token (retries, a long backlog) answered
"Today's digest: …" through the dead token: a logged traceback, then an apology through the
same dead token, and the person never heard. Breaks that turn these red: guarded() without the
EXPIRED_TOKEN branch (traceback logged, nothing sent); too_late() always to the channel (a
private answer shown to everyone); too_late() always by DM (a public answer hidden); the
fake's _token_expired() answering False (the follow-up is accepted).
"""

from __future__ import annotations

import logging

import pytest

from bot.runtime.effects import EffectExecutor
from digest.models import SubscriptionKind
from tests.fakes.discord import FakeDiscord
from tests.fakes.discord_interactions import issue
from tests.support.discord_app import (
    SERVER,
    discord_app_bot,  # noqa: F401 - the `bot` fixture
    dispatch,
    embed_text,
    slash,
)

pytestmark = pytest.mark.asyncio
DM = "942"  # the fake's DM channel with user 42 ("9" + the user id)


def no_traceback(caplog) -> None:
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]


async def test_a_digest_now_outcome_after_15_minutes_reaches_the_person_by_dm(bot, caplog):
    async def deliver(ref, day):
        bot.fake.advance(16 * 60)  # posting took longer than the token lives
        return "posted 5 papers"

    bot.client.deps.effects = EffectExecutor(bot.app.channels, deliver)
    bot.app.channels.follows.add(SERVER, SubscriptionKind.TOPIC, "diffusion models")
    with caplog.at_level(logging.WARNING):
        await dispatch(bot.client, slash("digest", "late1", mode="now"))
    assert bot.fake.expired == ["late1"]  # the follow-up was tried and refused like Discord
    assert "Today's digest" not in str(bot.fake.followups["late1"])
    (dm,) = bot.fake.arrived(DM)
    assert "Today's digest: posted 5 papers." in embed_text(dm)
    assert bot.fake.arrived(SERVER.channel_id) == []  # a private answer stays private
    no_traceback(caplog)


async def test_a_public_answer_after_15_minutes_is_posted_in_the_channel(bot, caplog, monkeypatch):
    core = bot.app.commands.invoke

    def slow(*a, **kw):
        bot.fake.advance(16 * 60)  # e.g. the first search fitting a large index
        return core(*a, **kw)

    monkeypatch.setattr(bot.app.commands, "invoke", slow)
    # A channel someone set up: in one nobody did, `list` is an error, and errors stay private.
    bot.app.channels.follows.add(SERVER, SubscriptionKind.TOPIC, "diffusion models")
    with caplog.at_level(logging.WARNING):
        await dispatch(bot.client, slash("list", "late2", public=True))
    assert bot.fake.expired == ["late2"] and bot.fake.followups["late2"] == []
    (posted,) = bot.fake.arrived(SERVER.channel_id)
    assert "diffusion models" in embed_text(posted)  # the channel's list, shown to everyone
    assert bot.fake.arrived(DM) == []
    no_traceback(caplog)


async def test_the_fake_refuses_follow_ups_and_edits_after_15_minutes():
    import httpx

    with FakeDiscord() as fake:
        iid = issue(2)
        async with httpx.AsyncClient(base_url=fake.base) as http:
            ack = await http.post(f"/interactions/{iid}/tok/callback", json={"type": 5})
            early = await http.post("/webhooks/2000/tok", json={"content": "in time"})
            fake.advance(15 * 60 + 1)
            late = await http.post("/webhooks/2000/tok", json={"content": "too late"})
            edit = await http.patch("/webhooks/2000/tok/messages/@original", json={"content": "x"})
    assert (ack.status_code, early.status_code) == (200, 200)
    assert (late.status_code, late.json()["code"]) == (401, 50027)
    assert (edit.status_code, edit.json()["code"]) == (401, 50027)
    assert [m["content"] for m in fake.followups["tok"]] == ["in time"]
