"""Delivery's resume path (issue 26): what a retry or a take-over sends, and what stops it.

Every count comes from what the fake platform received (``FakeSlack.arrived``/``posts``,
``FakeDiscord.arrived``, ``RecordingAdapter.messages``), never from the bot's own ledger.
"""

import asyncio
from datetime import UTC, date, datetime, time, timedelta

import discord
import pytest

from bot.adapters.discord.poster import DiscordPoster
from bot.adapters.slack.poster import SlackPoster
from bot.commands import Context
from bot.ports import PostError
from bot.runtime import stored_reply
from bot.runtime.runner import DigestRunner
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from digest.store.deliveries import FAILED, POSTED
from tests.fakes.discord import FakeDiscord
from tests.fakes.recording import RecordingAdapter
from tests.fakes.slack import FakeSlack

DAY = date(2026, 12, 1)
NOON = datetime.combine(DAY, time(12), tzinfo=UTC)  # `list` then tells DAY's digest as today's
LEASE = timedelta(seconds=0.3)


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1", "C2", "C3")
        yield fake


@pytest.fixture
def fake_discord(monkeypatch):
    with FakeDiscord() as f:
        monkeypatch.setattr(discord.http.Route, "BASE", f.base)
        yield f


def slack_poster(slack):
    async def lookup(team):
        return "xoxb-test"

    return SlackPoster(lookup, base_url=slack.url, min_interval=0, timeout=2)


def deliveries(app, worker="w1", **kw):
    return Deliveries(app.papers, worker, lease=LEASE, backoff=(0.2,), **kw)


def slack_channel(app, cid="C1", topic="diffusion models"):
    ref = ChannelRef("slack", cid, "T1")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, topic)
    return app.store.channels.get(ref)


def lapse():
    """Wait out a lease or a retry's delay (0.2-0.3 s in these tests)."""
    asyncio.run(asyncio.sleep(0.45))


def top_level_papers(messages):
    return [
        b["block_id"].removeprefix("paper:")
        for m in messages
        for b in m.get("blocks") or []
        if b.get("block_id", "").startswith("paper:")
    ]


def failing_nth_post(n, fault):
    """A chaos function: the ``n``-th chat.postMessage (1-based) gets ``fault``."""
    seen = {"posts": 0}

    def chaos(method, args):
        if method != "chat.postMessage":
            return None
        seen["posts"] += 1
        return fault if seen["posts"] == n else None

    return chaos


# 2. A resumed digest sends the messages that were planned, whatever the settings are now.


def test_a_threaded_digest_stays_threaded_when_threads_are_turned_off_before_its_retry(app, slack):
    """Issue 26 item 2: `option threads` switched while a digest waits for its retry.

    Seen: threads turned on lost 10 of 25 papers; turned off raised IndexError on every retry.
    Breaks that turn this red: DigestRunner._replayed returning the fresh rendering (the
    threaded/inline split of today's settings: IndexError, or papers sent in a new shape);
    the plan stored without ``rendered`` (ledger.plan ignoring it)."""
    ch = slack_channel(app)
    app.channels.settings.set_option(ch.ref, "threads", True)
    slack.chaos = failing_nth_post(3, "500")  # header and one more arrive, then Slack fails
    r = DigestRunner(deliveries(app), {"slack": slack_poster(slack)})
    assert asyncio.run(r.run_channel(ch.id, DAY)).startswith("retrying at ")
    app.channels.settings.set_option(ch.ref, "threads", False)
    lapse()
    assert asyncio.run(r.recover()) == ["posted 5 papers"]
    header, *replies = slack.arrived("C1")
    assert len(replies) == 5 and all(m["thread_ts"] == header["ts"] for m in replies)
    shown = top_level_papers(replies)
    items = app.store.deliveries.for_day(ch.id, DAY).items
    assert sorted(shown) == sorted(i.paper_id for i in items) and len(set(shown)) == 5


def test_an_inline_digest_stays_inline_when_threads_are_turned_on_before_its_retry(app, slack):
    """Issue 26 item 2, the other way: planned inline (one message), threads on at the retry.

    Breaks that turn this red: DigestRunner._replayed returning the fresh rendering (PlanMismatch:
    the digest fails instead of arriving); the stored reply not used by the retry."""
    ch = slack_channel(app)
    slack.chaos = failing_nth_post(1, "500")  # not stored: the retry must post it
    r = DigestRunner(deliveries(app), {"slack": slack_poster(slack)})
    assert asyncio.run(r.run_channel(ch.id, DAY)).startswith("retrying at ")
    app.channels.settings.set_option(ch.ref, "threads", True)
    lapse()
    assert asyncio.run(r.recover()) == ["posted 5 papers"]
    (message,) = slack.arrived("C1")
    assert not message.get("thread_ts") and len(set(top_level_papers([message]))) == 5


# 3. One claim that cannot be sent never blocks the others, and says why.


class Exploding(RecordingAdapter):
    """Raises a bug (not a platform error) for one channel."""

    def __init__(self, bad: str) -> None:
        super().__init__("console")
        self.bad = bad

    async def post_part(self, ref, reply, position, key, parent, degrade=False):
        if ref.channel_id == self.bad:
            raise IndexError("list index out of range")
        return await super().post_part(ref, reply, position, key, parent, degrade)


def test_one_broken_claim_among_several_is_failed_with_a_reason_and_the_rest_go_out(app):
    """Issue 26 item 3. Seen: recover() stopped at the first IndexError; three other digests sent
    nothing for 7 minutes, and start-up exited 2.
    Breaks that turn this red: DigestRunner.send without its catch-all (recover raises and the
    claims after the bad one are never sent); the failure not recorded (deliveries.fail skipped:
    `list` shows no reason)."""
    chans = []
    for name in ("a", "bad", "c"):
        ref = ChannelRef("console", name)
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
        chans.append(app.store.channels.get(ref))
    dead = deliveries(app, "host-1")
    for ch in chans:  # claimed, then the process died before posting anything
        assert dead.claim(ch, DAY) is not None
    lapse()
    adapter = Exploding("bad")
    outcomes = asyncio.run(DigestRunner(deliveries(app, "host-2"), {"console": adapter}).recover())
    assert outcomes[0] == outcomes[2] == "posted 5 papers"
    assert outcomes[1].startswith("failed: not sent because of an internal error (IndexError")
    assert {ref.channel_id for ref, _, _ in adapter.messages} == {"a", "c"}
    bad = app.store.deliveries.for_day(chans[1].id, DAY)
    assert bad.status == FAILED and "IndexError" in bad.last_error
    listing = app.commands.handle("list", Context(ref=chans[1].ref, user="u", now=NOON)).text
    assert "not delivered: not sent because of an internal error (IndexError" in listing


def test_start_up_goes_on_when_recovery_itself_fails(caplog):
    """Issue 26 item 3: _serve() called recover() unguarded (exit 2).
    Breaks that turn this red: cli_run._recover without its try/except."""
    from bot.cli.run import _recover

    class Broken:
        async def recover(self):
            raise RuntimeError("database starting")

    asyncio.run(_recover(Broken()))
    assert "resuming unfinished digests failed" in caplog.text


# 1. Slack's client never sends a post twice: only the ledger retries, after looking it up.


@pytest.mark.parametrize("fault", ["500-stored", "drop"])
def test_a_post_slack_stored_before_failing_is_not_posted_again(app, slack, fault):
    """Issue 26 item 1. Seen: slack_sdk's retry handlers resent chat.postMessage on 500 (and on
    dropped connections): 8 duplicates from 6 faults, three 500s in a row gave 4 copies.
    Breaks that turn this red: make_client's retry handlers kept for the poster (retries=3, or
    slack_sdk's default connection-error handler when retry_handlers is not given)."""
    ch = slack_channel(app)
    slack.chaos = failing_nth_post(1, fault)
    r = DigestRunner(deliveries(app), {"slack": slack_poster(slack)})
    assert asyncio.run(r.run_channel(ch.id, DAY)).startswith("retrying at ")
    assert len(slack.posts("C1")) == 1  # the client did not send it again by itself
    lapse()
    assert asyncio.run(r.recover()) == ["posted 5 papers"]
    assert len(slack.arrived("C1")) == 1 and len(slack.posts("C1")) == 1


# 6. A pause stops a digest that waits for its retry.


def test_pause_while_a_digest_waits_for_its_retry_stops_it(app, slack):
    """Issue 26 item 6. Seen: paused 17 s and 31 s after due, both posted at T+81 s.
    Breaks that turn this red: DigestRunner._send not re-reading the channel's paused flag."""
    ch = slack_channel(app)
    slack.chaos = failing_nth_post(1, "500")
    r = DigestRunner(deliveries(app), {"slack": slack_poster(slack)})
    assert asyncio.run(r.run_channel(ch.id, DAY)).startswith("retrying at ")
    app.channels.settings.set_paused(ch.ref, True, "paused by ann")
    lapse()
    (outcome,) = asyncio.run(r.recover())
    assert "paused" in outcome and slack.arrived("C1") == []
    d = app.store.deliveries.for_day(ch.id, DAY)
    assert d.status == FAILED and not d.items  # its papers wait for the next digest
    assert asyncio.run(r.recover()) == []  # and it is not taken over again and again


# 4. Start-up recovery waits for the platform's login.


def test_a_discord_claim_is_resumed_once_discord_is_logged_in_not_before(app, fake_discord):
    """Issue 26 item 4. Seen: recovery ran before the Discord login (AttributeError, exit 2).
    Breaks that turn this red: DigestRunner.recover taking over every platform's claims
    (not only connected ones); DiscordPoster.ready missing or always True."""
    ref = ChannelRef("discord", "111", "77")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    ch = app.store.channels.get(ref)
    assert deliveries(app, "host-1").claim(ch, DAY) is not None  # then the process died
    lapse()

    async def scenario():
        client = discord.Client(intents=discord.Intents.none())
        r = DigestRunner(deliveries(app, "host-2"), {"discord": DiscordPoster(client)})
        before = await r.recover()
        await client.login("fake-token")
        try:
            return before, await r.recover()
        finally:
            await client.close()

    before, after = asyncio.run(scenario())
    assert before == [] and after == ["posted 5 papers"]
    assert len(fake_discord.arrived("111")) == 1


# 5. Slack's documented refusals pause the channel with the reason; the record stays.


@pytest.mark.parametrize(
    "error", ["missing_scope", "restricted_action_read_only_channel", "not_a_documented_error"]
)
def test_a_slack_refusal_pauses_with_the_reason_and_keeps_the_record(app, slack, error):
    """Issue 26 item 5. Seen: unknown errors retried for 12 hours, never paused, and then the
    delivery row deleted (`channels`: "not delivered yet", no reason).
    Breaks that turn this red: classify() treating errors not on its lists as transient;
    missing_scope/restricted_action_read_only_channel dropped from GONE_ERRORS (an undocumented
    one still pauses, after a degraded try); ledger.fail deleting the row when nothing arrived."""
    ch = slack_channel(app)
    answer = {"ok": False, "error": error, "needed": "chat:write"}
    slack.fail[("chat.postMessage", "C1")] = [(200, {}, answer)] * 2
    r = DigestRunner(deliveries(app), {"slack": slack_poster(slack)})
    outcome = asyncio.run(r.run_channel(ch.id, DAY))
    assert outcome.startswith(f"failed: Slack error {error}") and "(channel paused)" in outcome
    assert slack.arrived("C1") == []
    paused = app.store.channels.by_id(ch.id)
    assert paused.paused and paused.paused_reason.startswith(error)
    d = app.store.deliveries.for_day(ch.id, DAY)
    assert d.status == FAILED and d.last_error.startswith(f"Slack error {error}") and not d.items
    listing = app.commands.handle("list", Context(ref=ch.ref, user="u", now=NOON)).text
    assert f"not delivered: Slack error {error}" in listing


# 7. The recovery lookup is bounded by the platform's clock, not the host's.


@pytest.mark.parametrize("lost", [1, 3])
def test_a_host_clock_ahead_of_slack_does_not_hide_a_posted_message(app, slack, lost):
    """Issue 26 item 7. Seen: a host 15 minutes ahead of Slack re-posted every message whose
    answer was lost (4 of 4), the lookup starting at claim time minus 10 minutes on SQLite's
    (the host's) clock. Breaks that turn this red: find_part given the claim time again
    (``oldest`` from the database clock) instead of an earlier message's ts."""
    slack.clock_skew = -15 * 60  # Slack's clock 15 minutes behind the bot's host
    ch = slack_channel(app)
    app.channels.settings.set_option(ch.ref, "threads", True)
    slack.chaos = failing_nth_post(lost, "drop")  # stored, but the answer never comes
    r = DigestRunner(deliveries(app), {"slack": slack_poster(slack)})
    assert asyncio.run(r.run_channel(ch.id, DAY)).startswith("retrying at ")
    lapse()
    assert asyncio.run(r.recover()) == ["posted 5 papers"]
    assert len(slack.arrived("C1")) == 6 == len(slack.posts("C1"))


# 8. `channels` and pause reasons.


def test_channels_says_a_partly_delivered_day_is_partly_delivered(app, capsys, monkeypatch):
    """Issue 26 item 8. Breaks that turn this red: cli_channels printing "no digest delivered
    yet" for a failed digest whose first messages were confirmed."""
    from bot.cli import channels as cli_channels

    ref = ChannelRef("console", "lab")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    ch = app.store.channels.get(ref)
    adapter_fail = PostError("invalid_blocks", "rejected")

    class FailsThird(RecordingAdapter):
        async def post_part(self, ref, reply, position, key, parent, degrade=False):
            if position == 2:
                raise adapter_fail
            return await RecordingAdapter.post_part(self, ref, reply, position, key, parent)

    adapter = FailsThird(per_message=2)
    r = DigestRunner(deliveries(app), {"console": adapter})
    assert "channel paused" in asyncio.run(r.run_channel(ch.id, DAY))
    monkeypatch.setattr(cli_channels, "wired", lambda db: app)
    monkeypatch.setattr(app, "close", lambda: None)
    cli_channels.channels_cmd(None)
    out = capsys.readouterr().out
    assert "partly delivered" in out and "no digest delivered yet" not in out
    assert app.store.deliveries.for_day(ch.id, DAY).status == FAILED
    assert app.store.deliveries.for_day(ch.id, DAY).status != POSTED


def test_a_discord_take_over_sends_the_planned_thread_after_threads_is_turned_off(
    app, fake_discord
):
    """Issue 26 item 2 on Discord: a threaded digest cut short (header and one paper sent), then
    `option threads` off, then a take-over. Breaks that turn this red: DigestRunner._replayed
    returning the fresh rendering (one inline message planned: PlanMismatch, 4 papers lost)."""
    from bot.commands.replies import digest_reply

    ref = ChannelRef("discord", "111", "77")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    app.channels.settings.set_option(ref, "threads", True)
    ch = app.store.channels.get(ref)

    async def scenario():
        client = discord.Client(intents=discord.Intents.none())
        await client.login("fake-token")
        try:
            dead, poster = deliveries(app, "host-1"), DiscordPoster(client)
            claim = dead.claim(ch, DAY)
            reply = digest_reply(claim.digest)
            plan = dead.plan(claim, poster.plan(reply), stored_reply.dumps(reply))
            parent = None
            for m in plan[:2]:  # the header and the first paper, then the process dies
                dead.sending(claim, m.position)
                sent = await poster.post_part(
                    ch.ref, reply, m.position, claim.part_key(m.position), parent
                )
                dead.confirm(claim, m.position, sent)
                parent = parent or sent
            app.channels.settings.set_option(ref, "threads", False)
            await asyncio.sleep(0.45)
            r = DigestRunner(deliveries(app, "host-2"), {"discord": DiscordPoster(client)})
            return await r.recover()
        finally:
            await client.close()

    assert asyncio.run(scenario()) == ["posted 5 papers"]
    (header,) = fake_discord.arrived("111")
    assert len(fake_discord.arrived(header["id"])) == 5  # every paper in the planned thread


def test_a_claim_that_cannot_be_rebuilt_is_failed_and_the_take_over_goes_on(
    app, slack, monkeypatch
):
    """The take-over path's per-claim guard (`Deliveries.take_over`'s try/except around
    `rebuild`): one lapsed claim whose digest cannot be rebuilt is failed with the reason, and
    the claims after it are still taken over and posted, on the strict Slack fake.

    Breaks that turn this red: the try/except around `rebuild` removed (recover raises at the
    second claim: the third is never posted and the second keeps no reason); the guard catching
    without `ledger.fail` (the broken claim stays unfinished, taken over again every sweep, and
    `list` names no reason); `continue` instead of the append (nothing is posted)."""
    from digest.delivery import steps

    chans = [slack_channel(app, cid) for cid in ("C1", "C2", "C3")]
    dead = deliveries(app, "host-1")
    for ch in chans:  # claimed, then the process died before posting anything
        assert dead.claim(ch, DAY) is not None
    lapse()
    real = steps.Deliveries.rebuild

    def rebuild(self, d):
        if d.channel_id == chans[1].id:  # a stored claim this code can no longer read
            raise KeyError("paper gone")
        return real(self, d)

    monkeypatch.setattr(steps.Deliveries, "rebuild", rebuild)
    runner = DigestRunner(deliveries(app, "host-2"), {"slack": slack_poster(slack)})
    outcomes = asyncio.run(runner.recover())
    assert outcomes == ["posted 5 papers", "posted 5 papers"]
    assert len(top_level_papers(slack.arrived("C1"))) == 5
    assert len(top_level_papers(slack.arrived("C3"))) == 5
    assert slack.arrived("C2") == [] and not slack.rejected
    bad = app.store.deliveries.for_day(chans[1].id, DAY)
    assert bad.status == FAILED and "internal error (KeyError" in bad.last_error
    lapse()
    assert asyncio.run(runner.recover()) == []  # failed for good: never taken over again
    listing = app.commands.handle("list", Context(ref=chans[1].ref, user="u", now=NOON)).text
    assert "not delivered: not sent because of an internal error (KeyError" in listing


def test_channels_says_a_discord_digest_paused_after_its_header_was_paused_and_why(
    app, fake_discord, capsys, monkeypatch
):
    """A Discord digest whose header was posted and whose next message Discord refused (twice,
    the second time degraded): `digestbot channels` says how much was posted, that the channel
    was paused and why, and today's digest as not sent because of the pause, never the bare
    "(partly delivered); today: not delivered".

    Breaks that turn this red: `channels_cmd` printing "(partly delivered)" alone (no pause, no
    reason); `today_state` not looking at the pause (no "(channel paused)")."""
    from bot.cli import channels as cli_channels

    ref = ChannelRef("discord", "111", "77")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    app.channels.settings.set_option(
        ref, "threads", True
    )  # header in the channel, papers in its thread
    ch = app.store.channels.get(ref)
    refused = (400, {}, {"message": "Invalid Form Body", "code": 50035, "errors": {}})

    day = app.clock().date()
    refusing: list[str] = []

    async def scenario():
        client = discord.Client(intents=discord.Intents.none())
        await client.login("fake-token")
        try:
            r = DigestRunner(deliveries(app), {"discord": DiscordPoster(client)})
            original = DiscordPoster.post_part

            async def post_part(self, ref, reply, position, key, parent, degrade=False):
                if position == 1 and not refusing:  # the first paper: Discord refuses it twice
                    (header,) = fake_discord.arrived("111")
                    refusing.append(header["id"])
                    fake_discord.fail[header["id"]] = [refused]  # in the thread
                    fake_discord.fail["111"] = [refused]  # and degraded, inline
                return await original(self, ref, reply, position, key, parent, degrade)

            monkeypatch.setattr(DiscordPoster, "post_part", post_part)
            return await r.run_channel(ch.id, day)
        finally:
            await client.close()

    outcome = asyncio.run(scenario())
    assert "channel paused" in outcome, outcome
    (header,) = fake_discord.arrived("111")
    assert fake_discord.arrived(header["id"]) == []  # nothing got into the thread
    monkeypatch.setattr(cli_channels, "wired", lambda db: app)
    monkeypatch.setattr(app, "close", lambda: None)
    cli_channels.channels_cmd(None)
    out = capsys.readouterr().out
    stored = app.store.deliveries.for_day(ch.id, day)
    assert f"last {day} (partly delivered: 1 of " in out, out
    assert f"messages posted, then paused: {stored.last_error})" in out, out
    assert "50035" in stored.last_error
    assert f"today: not delivered: {stored.last_error} (channel paused)" in out, out


@pytest.mark.parametrize("platform", ["slack", "discord"])
def test_a_host_clock_hours_ahead_does_not_repost_a_channels_first_message(
    app, slack, fake_discord, platform
):
    """A channel's first message ever, its answer lost, with the host's clock two hours ahead of
    the platform's: the lookup is bounded by the channel's newest message read from the
    platform before posting (the platform's clock), so the message is found, not posted twice.
    Each fake stamps messages with its own, skewed clock.

    Breaks that turn this red: `_keep_first_bound` not called (the lookup falls back to the
    claim time less an hour on the host's clock: the message is posted twice); `first_bound`
    read but ignored in the lookup (posted twice)."""
    if platform == "slack":
        slack.clock_skew = -2 * 3600
        slack.chaos = failing_nth_post(1, "drop")  # the header is stored; its answer is lost
        ref = ChannelRef("slack", "C1", "T1")
        poster, where = slack_poster(slack), "C1"
    else:
        fake_discord.clock_skew = -2 * 3600
        dropped = {"n": 0}

        def drop_first(method, path):
            if method == "POST" and path == "/channels/111/messages":
                dropped["n"] += 1
                return "drop" if dropped["n"] == 1 else None
            return None

        fake_discord.chaos = drop_first
        ref, where = ChannelRef("discord", "111", "77"), "111"
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    ch = app.store.channels.get(ref)

    async def scenario():
        if platform == "slack":
            r = DigestRunner(deliveries(app), {"slack": poster})
            first = await r.run_channel(ch.id, DAY)
            await asyncio.sleep(0.45)
            return first, await r.recover()
        client = discord.Client(intents=discord.Intents.none())
        await client.login("fake-token")
        try:
            r = DigestRunner(deliveries(app), {"discord": DiscordPoster(client)})
            first = await r.run_channel(ch.id, DAY)
            await asyncio.sleep(0.45)
            return first, await r.recover()
        finally:
            await client.close()

    first, again = asyncio.run(scenario())
    assert first.startswith("retrying at "), first
    assert again == ["posted 5 papers"]
    if platform == "slack":
        assert len(slack.arrived(where)) == 1 == len(slack.posts(where))  # posted once
    else:
        assert len(fake_discord.arrived(where)) == 1  # one digest message, not two
