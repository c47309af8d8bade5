"""Slack digests through the runner and a local fake Web API: Block Kit, retries, errors, recovery."""

import asyncio
from datetime import date, timedelta

import pytest

from bot.adapters.slack.poster import SlackPoster
from bot.commands.replies import digest_reply
from bot.runtime.runner import DigestRunner
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_limits import check

DAY = date(2026, 12, 1)


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join(
            "C1", "CBAD", "CGOOD"
        )  # the bot was invited to them; a post anywhere else is refused
        yield fake


def poster(slack, tokens=None):
    async def lookup(team):
        return (tokens or {"T1": "xoxb-test"}).get(team)

    return SlackPoster(lookup, base_url=slack.url, min_interval=0, backoff=0.01)


def channel(app, cid="C1", topic="diffusion models", team="T1"):
    ref = ChannelRef("slack", cid, team)
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, topic)
    return app.store.channels.get(ref)


def runner(app, slack, worker="w1", tokens=None, **kw):
    return DigestRunner(Deliveries(app.papers, worker, **kw), {"slack": poster(slack, tokens)})


def blocks_message(args):
    from bot.adapters.slack.blocks import SlackMessage

    return SlackMessage(args["text"], args["blocks"])


def test_scheduled_digest_arrives_as_valid_block_kit(app, slack):
    ch = channel(app)
    assert asyncio.run(runner(app, slack).run_channel(ch.id, DAY)) == "posted 5 papers"
    (post,) = slack.posts("C1")
    check(
        blocks_message(post),
        {
            b["text"]["text"].split("<")[1].split("|")[0]
            for b in post["blocks"]
            if b["type"] == "section" and "<http" in b["text"]["text"]
        },
    )
    assert (
        post["unfurl_links"] in (False, "0", "false")
        and post["metadata"]["event_type"] == "digestbot_digest"
    )
    assert post["blocks"][0]["text"]["text"].startswith("📚 Papers for Tue 01 Dec 2026")
    assert sum(b["type"] == "actions" for b in post["blocks"]) == 5
    assert (
        app.store.deliveries.for_day(ch.id, DAY).message_ref
        == f"C1:{slack.messages['C1'][0]['ts']}"
    )


def test_threaded_digest_posts_a_header_and_one_reply_per_paper(app, slack):
    ch = channel(app)
    app.channels.settings.set_option(ch.ref, "threads", True)
    asyncio.run(runner(app, slack).run_channel(ch.id, DAY))
    header, *items = slack.posts("C1")
    assert len(items) == 5 and all(i["thread_ts"] == slack.messages["C1"][0]["ts"] for i in items)
    delivery = app.store.deliveries.for_day(ch.id, DAY)
    assert delivery.status == "posted"


def test_rate_limit_and_server_error_are_retried_without_double_posting(app, slack):
    ch = channel(app)
    """Each attempt is one request: the delivery ledger retries (after looking the message up),
    never the Slack client by itself (issue 26: it re-sent messages Slack had stored)."""
    slack.fail[("chat.postMessage", "C1")] = [
        (429, {"Retry-After": "0"}, {"ok": False, "error": "ratelimited"}),
        (500, {}, {"ok": False, "error": "internal_error"}),
    ]
    r = runner(app, slack, backoff=(0.2,))
    assert asyncio.run(r.run_channel(ch.id, DAY)).startswith("retrying at ")
    assert len(slack.posts("C1")) == 1
    asyncio.run(asyncio.sleep(0.3))
    assert asyncio.run(r.recover())[0].startswith("retrying at ")
    assert len(slack.posts("C1")) == 2
    asyncio.run(asyncio.sleep(0.3))
    assert asyncio.run(r.recover()) == ["posted 5 papers"]
    assert len(slack.posts("C1")) == 3 and len(slack.messages["C1"]) == 1


@pytest.mark.parametrize(
    "error", ["channel_not_found", "not_in_channel", "is_archived", "token_revoked"]
)
def test_permanent_errors_pause_only_that_channel(app, slack, error):
    bad, good = channel(app, "CBAD"), channel(app, "CGOOD")
    slack.fail[("chat.postMessage", "CBAD")] = [(200, {}, {"ok": False, "error": error})]
    r = runner(app, slack)
    assert "channel paused" in asyncio.run(r.run_channel(bad.id, DAY))
    assert asyncio.run(r.run_channel(good.id, DAY)) == "posted 5 papers"
    bad = app.store.channels.by_id(bad.id)
    assert bad.paused and bad.paused_reason.split(" (")[0] == error
    assert "paused: " + error in app.commands.handle("list", _ctx(bad.ref)).text


def test_transient_failure_then_a_retry_posts_once(app, slack):
    ch = channel(app)
    slack.fail[("chat.postMessage", "C1")] = [(500, {}, {"ok": False, "error": "fatal_error"})]
    first = runner(app, slack, "host-1", backoff=(0.2,))
    assert "after Slack error fatal_error" in asyncio.run(first.run_channel(ch.id, DAY))
    asyncio.run(asyncio.sleep(0.3))
    assert asyncio.run(first.recover()) == ["posted 5 papers"]  # the same process retries
    assert len(slack.messages["C1"]) == 1


def crash_midway(app, slack, ch, sent: int, confirmed: int):
    """A worker that posted messages [0, sent) and confirmed [0, confirmed), then died."""
    dead = Deliveries(app.papers, "host-1", lease=timedelta(seconds=0.3))
    claim = dead.claim(ch, DAY)
    reply = digest_reply(claim.digest)
    p = poster(slack)
    plan = dead.plan(claim, p.plan(reply))

    async def go():
        parent = None
        for m in plan[:sent]:
            dead.sending(claim, m.position)
            ref = await p.post_part(ch.ref, reply, m.position, claim.part_key(m.position), parent)
            parent = parent or ref
            if m.position < confirmed:
                dead.confirm(claim, m.position, ref)
        await asyncio.sleep(0.4)  # the lease lapses

    asyncio.run(go())
    return claim, plan


def test_crash_after_posting_is_found_by_its_metadata_and_not_reposted(app, slack):
    ch = channel(app)
    crash_midway(app, slack, ch, sent=1, confirmed=0)
    assert asyncio.run(runner(app, slack, "host-2").recover()) == ["posted 5 papers"]
    assert len(slack.messages["C1"]) == 1


def test_a_threaded_digest_cut_short_is_completed_with_every_paper_once(app, slack):
    """Seen before: 16 of 19 thread items lost once recovery found the header."""
    ch = channel(app)
    app.channels.settings.set_option(ch.ref, "threads", True)
    ch = app.store.channels.by_id(ch.id)
    claim, plan = crash_midway(app, slack, ch, sent=3, confirmed=2)
    assert asyncio.run(runner(app, slack, "host-2").recover()) == ["posted 5 papers"]
    arrived = slack.arrived("C1")
    parent = arrived[0]["ts"]
    assert len(plan) == 6 and len(arrived) == 6
    assert all(m.get("thread_ts") == parent for m in arrived[1:])
    shown = [m["blocks"][0]["block_id"].removeprefix("paper:") for m in arrived[1:]]
    assert sorted(shown) == sorted(i.paper_id for i in claim.delivery.items)


def test_a_link_slack_refuses_is_dropped_and_the_digest_still_arrives(app, slack):
    from sqlalchemy import update
    from sqlalchemy.orm import Session

    from digest.store.schema import PaperRow

    with Session(app.store.engine) as s:
        s.execute(update(PaperRow).values(code_url="https://example.org/" + "a" * 3100))
        s.commit()
    ch = channel(app)
    assert asyncio.run(runner(app, slack).run_channel(ch.id, DAY)) == "posted 5 papers"
    assert slack.rejected == [] and len(slack.arrived("C1")) == 1


def test_personal_digest_goes_to_the_users_dm(app, slack):
    slack.add_user("U42")
    ch = channel(app, "@U42")
    asyncio.run(runner(app, slack).run_channel(ch.id, DAY))
    assert ("conversations.open", {"users": "U42"}) in [
        (m, {"users": a.get("users")}) for m, a in slack.calls
    ]
    assert slack.posts("DU42") and slack.arrived("DU42")


def test_a_personal_digest_of_someone_not_in_the_workspace_pauses(app, slack):
    """Slack cannot open a DM with a user it does not know (``user_not_found``): the digest is
    paused with that reason, nothing is posted, the day is not counted as delivered. Breaks that
    turn this red: the fake's conversations.open accepting any id (it would post: "posted 5
    papers"); ``user_not_found`` dropped from GONE_ERRORS (a retry, not a pause)."""
    ch = channel(app, "@U404")
    outcome = asyncio.run(runner(app, slack).run_channel(ch.id, DAY))
    assert outcome.startswith("failed: Slack error user_not_found") and "paused" in outcome
    assert ("conversations.open", "U404", "user_not_found") in slack.refusals
    assert not slack.posts() and app.store.deliveries.last(ch.id).posted_at is None
    assert app.store.channels.by_id(ch.id).paused_reason.startswith("user_not_found")


def test_uninstalled_workspace_pauses_its_channel(app, slack):
    ch = channel(app, team="T9")
    assert "channel paused" in asyncio.run(runner(app, slack).run_channel(ch.id, DAY))
    assert (
        app.store.channels.by_id(ch.id).paused_reason == "no Slack installation for this workspace"
    )


def _ctx(ref):
    from bot.commands import Context

    return Context(ref=ref, user="U1")


@pytest.mark.parametrize(
    ("where", "error", "hint"),
    [
        ("CNEVER", "channel_not_found", "Slack cannot find this channel"),  # Slack never saw it
        ("COUTSIDE", "not_in_channel", "invite it"),  # exists, the app was never invited
    ],
)
def test_a_channel_the_bot_cannot_post_in_is_said_and_not_marked_delivered(
    app, slack, where, error, hint
):
    """The fake answers like Slack: an unknown channel `channel_not_found`, one without the bot
    `not_in_channel` (it accepted both before). Breaks that turn this red: the fake's
    membership_refused() returning None (posted 5 papers); those errors classified transient
    (a retry, no pause); the hint dropped from classify(); deliveries.fail() skipped."""
    slack.known.add("COUTSIDE")
    ch = channel(app, where)
    outcome = asyncio.run(runner(app, slack).run_channel(ch.id, DAY))
    assert outcome.startswith(f"failed: Slack error {error} (") and hint in outcome, outcome
    assert outcome.endswith("(channel paused)") and slack.arrived(where) == []
    kept = app.store.deliveries.for_day(ch.id, DAY)  # nothing arrived: failed, with the reason
    assert kept.status == "failed" and not kept.items and kept.posted_at is None
    listing = app.commands.handle("list", _ctx(ch.ref)).text
    assert f"⏸ paused: {error} (" in listing and hint in listing
    assert asyncio.run(runner(app, slack).run_channel(ch.id, DAY)).startswith("paused: ")
    assert slack.arrived(where) == []


def test_the_fake_refuses_what_slack_refuses():
    """Posting needs a channel Slack knows and the bot is in. A DM needs no invitation, but as in
    Slack only a user of the workspace (``U…``/``W…``: posted into their IM with the app, which
    it opens) or an IM that was opened (``D…``); any other id is ``channel_not_found``, and
    every refusal is recorded. Breaks that turn this red: membership_refused() accepting any
    ``U…``/``W…`` id again (U404: ok); exists() accepting any ``D…`` id again (D123: ok); a
    post to a user id recorded under the user id instead of the IM where it arrived."""
    import httpx

    def post(fake: FakeSlack, channel: str) -> dict:
        return httpx.post(
            f"{fake.url}chat.postMessage", json={"channel": channel, "text": "hi"}
        ).json()

    with FakeSlack() as fake:
        fake.join("CIN")
        fake.known.add("COUT")
        fake.add_user("U42")
        fake.add_user("W7")
        ids = ("CIN", "COUT", "CNONE", "D123", "DU2", "U42", "W7", "U404", "W404")
        answers = {ch: post(fake, ch) for ch in ids}
        assert fake.arrived("DU42") and fake.arrived("DW7") and not fake.arrived("U42")
        assert answers["U42"]["channel"] == "DU42"  # Slack answers with the IM's id
        fake.open_im("U2")  # U2 wrote to the app: now its IM takes posts
        assert post(fake, "DU2")["ok"] and fake.arrived("DU2")
        opened = httpx.post(f"{fake.url}conversations.open", json={"users": "U404"}).json()
        refusals = list(fake.refusals)
    assert {ch: a.get("error", "ok") for ch, a in answers.items()} == {
        "CIN": "ok",
        "COUT": "not_in_channel",
        "CNONE": "channel_not_found",
        "D123": "channel_not_found",
        "DU2": "channel_not_found",
        "U42": "ok",
        "W7": "ok",
        "U404": "channel_not_found",
        "W404": "channel_not_found",
    }
    assert opened == {"ok": False, "error": "user_not_found"}
    assert ("chat.postMessage", "U404", "channel_not_found") in refusals
    assert ("conversations.open", "U404", "user_not_found") in refusals
