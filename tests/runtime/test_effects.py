"""One executor carries out a reply's effects on every platform (issue 24): each effect below runs
through the console, Slack and Discord paths, and the test checks what arrived where the person
would see it (the console's text and files, the fake Slack, the fake Discord).

Breaks that turn these red (each tried): EffectExecutor.carry_out skipping the attachment step
(console: no file; Slack: no upload; the Discord file still travels with the answer, so only the
console and Slack go red); dropping the poke (every platform's schedule test); dropping the
deliver-now step or its "Today's digest" note (every platform's digest-now test); App._poke
never reaching the scheduler (the console's schedule test).
"""

from __future__ import annotations

import asyncio
import io
from datetime import date

import pytest

from bot.cli.channels import apply_reply
from bot.commands import Context
from bot.runtime.effects import EffectExecutor
from bot.runtime.runner import DigestRunner
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from tests.adapters.slack.test_slack_http import Harness
from tests.fakes.slack import FakeSlack
from tests.support.discord_app import (
    SERVER,
    discord_app_bot,  # noqa: F401 - the `bot` fixture
    dispatch,
    embed_text,
    slash,
)

LAB = ChannelRef("console", "lab")
SLACK = ChannelRef("slack", "C1", "T1")


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")  # the bot was invited: it may post and share files there
        yield fake


def console(app, text: str, ref: ChannelRef = LAB) -> str:
    """A line typed at the console: the reply carried out, the text printed."""
    ctx = Context(ref, "ann", is_admin=True)
    reply = app.commands.handle(text, ctx)
    return asyncio.run(apply_reply(app, reply, ctx))


def liked(app, ref: ChannelRef, user: str) -> None:
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    app.channels.vote(ref, user, "syn-sae-1", 1)


# --- a file to attach ---------------------------------------------------------------------------


def test_attachment_at_the_console_is_a_file_in_the_data_folder(app):
    liked(app, LAB, "ann")
    shown = console(app, "export bibtex liked")
    written = app.settings.resolved_index_dir().parent / "digestbot-liked.bib"
    assert "@inproceedings{" in written.read_text(encoding="utf-8")
    assert f"Written to {written.resolve()}" in shown and "@inproceedings{" not in shown


@pytest.mark.asyncio
async def test_attachment_on_slack_is_uploaded_to_the_dm(app, slack):
    liked(app, SLACK, "U1")
    async with Harness(app, slack) as h:
        await h.done("export bibtex liked")
    (file,) = slack.shared_files("DU1")  # a private answer: the file goes to the person's DM
    assert file["name"] == "digestbot-liked.bib" and "@inproceedings{" in file["content"]
    assert "Sent as digestbot-liked.bib" in str(slack.responses()[-1])


@pytest.mark.asyncio
async def test_attachment_on_discord_goes_with_the_answer(bot):
    liked(bot.app, SERVER, "42")
    await dispatch(bot.client, slash("export", "x1", which="liked"))
    (answer,) = bot.fake.followups["x1"]
    (file,) = answer["attachments"]
    assert file["filename"] == "digestbot-liked.bib" and "@inproceedings{" in file["text"]


# --- the schedule changed -----------------------------------------------------------------------


def test_schedule_change_at_the_console_pokes_the_running_scheduler(app, monkeypatch):
    pokes = []
    monkeypatch.setattr(app.scheduler, "poke", lambda: pokes.append(1))
    app.channels.follows.add(LAB, SubscriptionKind.TOPIC, "diffusion models")
    assert "10:30" in console(app, "schedule 10:30") and pokes == [1]


@pytest.mark.asyncio
async def test_schedule_change_on_slack_pokes_the_scheduler(app, slack):
    pokes = []
    app.channels.follows.add(SLACK, SubscriptionKind.TOPIC, "diffusion models")
    async with Harness(app, slack, poke=lambda: pokes.append(1)) as h:
        await h.done("schedule 10:30")
    assert "10:30" in str(slack.responses()[-1]) and pokes == [1]


@pytest.mark.asyncio
async def test_schedule_change_on_discord_pokes_the_scheduler(bot):
    pokes = []
    bot.client.deps.effects = EffectExecutor(bot.app.channels, poke=lambda: pokes.append(1))
    bot.app.channels.follows.add(SERVER, SubscriptionKind.TOPIC, "diffusion models")
    await dispatch(bot.client, slash("schedule", "s1", time="10:30"))
    assert "10:30" in embed_text(bot.fake.followups["s1"][0]) and pokes == [1]


# --- a digest to post now -----------------------------------------------------------------------


def test_digest_now_at_the_console_prints_it_and_says_how_it_went(app):
    app.out = io.StringIO()  # before the runner is first built: where console digests print
    app.channels.follows.add(LAB, SubscriptionKind.TOPIC, "diffusion models")
    shown = console(app, "digest now")
    assert "=== #lab ===" in app.out.getvalue() and "Papers for" in app.out.getvalue()
    assert shown.endswith("Today's digest: posted 5 papers.")


@pytest.mark.asyncio
async def test_digest_now_on_slack_posts_to_the_channel_and_tells_the_asker(app, slack):
    async with Harness(app, slack) as h:
        await h.done("subscribe diffusion models")
        await h.command("digest now")
        await h.responses(3)  # the answer, then how it went
    assert any(m.get("blocks") for m in slack.messages["C1"])  # the digest itself
    told = slack.responses()[-1]
    assert (
        told["text"] == "Today's digest: posted 5 papers." and told["response_type"] == "ephemeral"
    )


@pytest.mark.asyncio
async def test_digest_now_on_discord_posts_to_the_channel_and_tells_the_asker(bot):
    runner = DigestRunner(Deliveries(bot.app.papers, "w1"), {"discord": bot.client.poster})
    days: list[date] = []

    async def deliver(ref: ChannelRef, day: date) -> str:
        days.append(day)
        return await runner.run_now(ref, day)

    bot.client.deps.effects = EffectExecutor(bot.app.channels, deliver)
    bot.app.channels.follows.add(SERVER, SubscriptionKind.TOPIC, "diffusion models")
    await dispatch(bot.client, slash("digest", "n1", mode="now"))
    assert any("Papers for" in embed_text(m) for m in bot.fake.arrived(SERVER.channel_id))
    told = bot.fake.followups["n1"][-1]
    assert told["content"] == "Today's digest: posted 5 papers." and told["flags"] & 64
    assert len(days) == 1
