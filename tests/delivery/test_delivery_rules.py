"""Rules of the delivery protocol that no other test guarded (issues 23 and 26).

A mutation check of the delivery code found each of these breaks surviving every delivery and
reliability test; each test below names the break that turns it red. Counts come from what the
fake platform received, never from the bot's ledger.
"""

import asyncio
from datetime import date, timedelta

import discord
import pytest

from bot.adapters.discord.poster import DiscordPoster
from bot.adapters.slack.poster import SlackPoster
from bot.commands.replies import digest_reply
from bot.ports import PostError
from bot.runtime.runner import DigestRunner
from digest.delivery import steps as delivery_module
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from digest.store.deliveries import FAILED, POSTED, UNFINISHED
from tests.fakes.discord import FakeDiscord
from tests.fakes.recording import RecordingAdapter
from tests.fakes.slack import FakeSlack
from tests.support.corpus import synthetic_records

DAY = date(2026, 12, 1)
LEASE = timedelta(seconds=0.3)


def console_channel(app, name="lab", topic="diffusion models"):
    ref = ChannelRef("console", name)
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, topic)
    return app.store.channels.get(ref)


def deliveries(app, worker="w1", lease=LEASE):
    return Deliveries(app.papers, worker, lease=lease, backoff=(0.2,))


class FailsAt(RecordingAdapter):
    """Refuses message ``position`` (even degraded) with ``error``."""

    def __init__(self, position: int, error: PostError, per_message: int = 2) -> None:
        super().__init__("console", per_message=per_message)
        self.position, self.error = position, error

    async def post_part(self, ref, reply, position, key, parent, degrade=False):
        if position == self.position:
            raise self.error
        return await super().post_part(ref, reply, position, key, parent, degrade)


def test_failing_a_digest_keeps_the_papers_of_its_confirmed_messages(app):
    """Breaks that turn this red: ledger.fail() deleting every item of the digest (also the
    papers of confirmed messages: they are sent again in the next digest)."""
    ch = console_channel(app)
    adapter = FailsAt(2, PostError("invalid_blocks", "rejected"))
    r = DigestRunner(deliveries(app), {"console": adapter})
    assert "channel paused" in asyncio.run(r.run_channel(ch.id, DAY))
    arrived = set(adapter.papers("lab"))
    assert len(arrived) == 2  # message 1 (two papers) arrived; message 2 was refused
    assert app.store.deliveries.delivered_paper_ids(ch.id) == arrived
    app.channels.settings.set_paused(ch.ref, False)
    adapter.position = -1
    asyncio.run(r.run_channel(ch.id, DAY + timedelta(days=1)))
    papers = adapter.papers("lab")
    assert len(papers) == len(set(papers))  # nothing shown twice


def test_failing_a_digest_reopens_the_window_for_its_unsent_new_papers(app):
    """With the backlog off only papers ingested after the last digest's bound are candidates;
    a failed digest must give that window back or its unsent papers are never sent.
    Breaks that turn this red: ledger.fail() not resetting upto_seq (``_before``)."""
    ch = console_channel(app)
    app.channels.settings.set_option(ch.ref, "backlog", False)
    adapter = FailsAt(0, PostError("invalid_blocks", "rejected"))
    r = DigestRunner(deliveries(app), {"console": adapter})
    assert "channel paused" in asyncio.run(r.run_channel(ch.id, DAY))
    assert adapter.papers("lab") == []
    app.channels.settings.set_paused(ch.ref, False)
    adapter.position = -1
    assert asyncio.run(r.run_channel(ch.id, DAY + timedelta(days=1))) == "posted 5 papers"


def test_the_ingest_bound_is_read_before_the_digest_is_composed(app, monkeypatch):
    """A paper committed while the digest is being composed is not in it, so it must be above
    the bound and go to the next digest. Breaks that turn this red: Deliveries.claim reading
    ``max_seq()`` after compose_digest (the paper counts as considered and is never sent)."""
    ch = console_channel(app)
    app.channels.settings.set_option(ch.ref, "backlog", False)
    # a late paper above the default threshold (0.56 calibrated; syn-diffusion-35 is at 0.25)
    late = [r for r in synthetic_records(per_topic=40) if r.id == "syn-diffusion-34"]
    compose = delivery_module.compose_digest

    def composing(*args, **kw):
        digest = compose(*args, **kw)
        if late:  # ingest commits while this digest is composed (once)
            app.store.papers.upsert([late.pop()])
        return digest

    monkeypatch.setattr(delivery_module, "compose_digest", composing)
    adapter = RecordingAdapter()
    r = DigestRunner(deliveries(app), {"console": adapter})
    asyncio.run(r.run_channel(ch.id, DAY))
    assert "syn-diffusion-34" not in adapter.papers("lab")
    asyncio.run(r.run_channel(ch.id, DAY + timedelta(days=1)))
    assert "syn-diffusion-34" in adapter.papers("lab")


def test_a_live_lease_is_not_taken_over(app):
    """Breaks that turn this red: DeliveryRepo.take_over without ``lease_until < now`` (or
    expired() without it): a second worker posts a digest its owner is still sending."""
    ch = console_channel(app)
    owner = deliveries(app, "owner", lease=timedelta(minutes=5))
    claim = owner.claim(ch, DAY)
    assert claim is not None
    assert app.store.deliveries.take_over(claim.delivery.id, "thief", 60.0) is None
    adapter = RecordingAdapter()
    assert asyncio.run(DigestRunner(deliveries(app, "thief"), {"console": adapter}).recover()) == []
    assert adapter.messages == []
    assert owner.renew(claim)  # the owner still holds it


def test_a_digest_is_not_finished_while_one_of_its_messages_is_open(app):
    """Breaks that turn this red: ledger.finish() without its ``open_messages`` condition."""
    ch = console_channel(app)
    d = deliveries(app)
    claim = d.claim(ch, DAY)
    reply = digest_reply(claim.digest)
    plan = d.plan(claim, RecordingAdapter(per_message=2).plan(reply))
    assert len(plan) > 2
    for m in plan[:-1]:
        assert d.confirm(claim, m.position, f"ref-{m.position}")
    assert not d.finish(claim)
    assert app.store.deliveries.for_day(ch.id, DAY).status != POSTED
    assert d.confirm(claim, plan[-1].position, "ref-last") and d.finish(claim)


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")
        yield fake


def slack_runner(app, slack):
    async def lookup(team):
        return "xoxb-test"

    poster = SlackPoster(lookup, base_url=slack.url, min_interval=0, timeout=2)
    return DigestRunner(deliveries(app), {"slack": poster})


def test_slack_retry_after_sets_the_earliest_retry(app, slack):
    """Breaks that turn this red: Deliveries.retry_later ignoring ``at_least``; classify()
    dropping the Retry-After header; the poster's client retrying 429s itself (it would sleep
    out Retry-After inside one attempt, holding the lease)."""
    ref = ChannelRef("slack", "C1", "T1")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    ch = app.store.channels.get(ref)
    slack.fail[("chat.postMessage", "C1")] = [
        (429, {"Retry-After": "900"}, {"ok": False, "error": "ratelimited"})
    ]
    outcome = asyncio.run(slack_runner(app, slack).run_channel(ch.id, DAY))
    assert outcome.startswith("retrying at ") and "ratelimited" in outcome
    d = app.store.deliveries.for_day(ch.id, DAY)
    assert d.status in UNFINISHED and (d.retry_at - d.claimed_at) >= timedelta(seconds=890)
    assert len(slack.posts("C1")) == 1 and slack.arrived("C1") == []


@pytest.fixture
def fake_discord(monkeypatch):
    with FakeDiscord() as f:
        monkeypatch.setattr(discord.http.Route, "BASE", f.base)
        yield f


def test_a_deleted_discord_header_sends_the_papers_inline_not_a_pause(app, fake_discord):
    """The header of a threaded digest is deleted between attempts: starting its thread answers
    10008 Unknown Message. Breaks that turn this red: classify() taking 10008 for a gone
    channel (the channel is paused and the papers never arrive)."""
    ref = ChannelRef("discord", "111", "77")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    app.channels.settings.set_option(ref, "threads", True)
    ch = app.store.channels.get(ref)

    async def scenario():
        client = discord.Client(intents=discord.Intents.none())
        await client.login("fake-token")
        try:
            dead = deliveries(app, "host-1")
            claim = dead.claim(ch, DAY)
            poster = DiscordPoster(client)
            reply = digest_reply(claim.digest)
            dead.plan(claim, poster.plan(reply))
            dead.sending(claim, 0)
            header = await poster.post_part(ch.ref, reply, 0, claim.part_key(0), None)
            dead.confirm(claim, 0, header)
            fake_discord.messages["111"].clear()  # someone deletes the header; then a crash
            await asyncio.sleep(0.45)
            r = DigestRunner(deliveries(app, "host-2"), {"discord": DiscordPoster(client)})
            return await r.recover()
        finally:
            await client.close()

    assert asyncio.run(scenario()) == ["posted 5 papers"]
    assert not app.store.channels.by_id(ch.id).paused
    assert len(fake_discord.arrived("111")) == 5  # each paper inline, once
    assert app.store.deliveries.for_day(ch.id, DAY).status == POSTED


def test_a_rejected_then_resumed_channel_gets_the_day_again_on_demand(app):
    """A failed digest that delivered nothing keeps its record (the reason stays visible) but
    does not use up the day: after `/papers resume`, `digest now` sends it.
    Breaks that turn this red: Deliveries.claim without DeliveryRepo.reopen."""
    ch = console_channel(app)
    adapter = FailsAt(0, PostError("invalid_blocks", "rejected"))
    r = DigestRunner(deliveries(app), {"console": adapter})
    assert "channel paused" in asyncio.run(r.run_channel(ch.id, DAY))
    assert app.store.deliveries.for_day(ch.id, DAY).status == FAILED
    app.channels.settings.set_paused(ch.ref, False)
    adapter.position = -1
    assert asyncio.run(r.run_channel(ch.id, DAY)) == "posted 5 papers"
