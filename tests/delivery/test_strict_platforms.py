"""What the platforms refuse, as the strict fakes refuse it, and how the bot copes; checked on what
the fake channels hold. Breaks tried (each went red):
- Discord NotFound classified transient -> the unknown channel is retried, not paused;
- 10008 (deleted header) classified like 10003 -> the channel is paused instead of the papers
  posted inline;
- the vote listener without its chat.update error handling -> "Something went wrong ... nothing
  was changed" although the vote was recorded;
- guard.ephemeral without the DM fallback -> the non-member is told nothing.
"""

import asyncio
import json
from datetime import date
from types import SimpleNamespace

import pytest

from bot.adapters.slack.listener_errors import answer
from bot.adapters.slack.listeners import VOTE_KEPT
from bot.adapters.slack.poster import make_client
from digest.models import ChannelRef
from tests.adapters.discord import test_discord_posting as dp
from tests.adapters.slack.test_slack_http import Harness, eventually
from tests.commands import test_busy_channel as busy

DAY = date(2026, 12, 1)

slack, fake = busy.slack, busy.fake  # the strict fakes, as fixtures


def test_a_discord_channel_the_guild_lacks_pauses_with_nothing_posted(app, fake):
    ch = dp.channel(app, "999")  # deleted, or never in this guild: Discord says 404 / 10003
    outcome = dp.run(app, fake, lambda p: dp.runner(app, p).run_channel(ch.id, DAY))
    assert "channel paused" in outcome and "channel not found" in outcome
    assert fake.arrived("999") == [] and app.store.channels.by_id(ch.id).paused


def test_a_deleted_header_sends_the_rest_inline_without_pausing(app, fake):
    ch = dp.channel(app)
    app.channels.settings.set_option(ch.ref, "threads", True)
    ch = app.store.channels.by_id(ch.id)

    async def scenario(p):
        _, plan, crashed = dp.crash_midway(app, p, ch, sent=1, confirmed=1)
        await crashed
        fake.messages["111"].clear()  # a moderator deleted the digest's first message
        return plan, await dp.runner(app, p, "host-2").recover()

    plan, outcome = dp.run(app, fake, scenario)
    assert outcome == ["posted 5 papers"] and not app.store.channels.by_id(ch.id).paused
    assert len(fake.arrived("111")) == len(plan) - 1 and not fake.threads


async def _posted_digest(h: Harness, app, slack) -> tuple[dict, str]:
    await h.done("subscribe graph neural networks")
    ch = app.store.channels.get(ChannelRef("slack", "C1", "T1"))
    assert (await h.digests.run_channel(ch.id, DAY)).startswith("posted")
    posted = slack.messages["C1"][0]
    paper = next(b["block_id"][4:] for b in posted["blocks"] if b["type"] == "actions")
    return posted, paper


@pytest.mark.asyncio
async def test_a_vote_updates_the_message_that_arrived(app, slack):
    async with Harness(app, slack) as h:
        posted, paper = await _posted_digest(h, app, slack)
        await h.action(
            {"action_id": "vote_up", "value": paper, "type": "button", "block_id": f"act:{paper}"},
            message=dict(posted),
        )
        await eventually(lambda: "👍 1" in json.dumps(slack.messages["C1"][0], ensure_ascii=False))
    assert slack.messages["C1"][0]["edited"]


@pytest.mark.asyncio
@pytest.mark.parametrize("how", ["deleted", "not ours"])
async def test_a_vote_on_a_message_slack_wont_update_is_kept_and_said(app, slack, how):
    async with Harness(app, slack) as h:
        posted, paper = await _posted_digest(h, app, slack)
        if how == "deleted":
            slack.messages["C1"].clear()
        else:  # the same blocks, but a message someone else posted
            slack.messages["C1"][0]["user"] = "U2"
        before = len(slack.responses())
        await h.action(
            {"action_id": "vote_up", "value": paper, "type": "button", "block_id": f"act:{paper}"},
            message=dict(posted),
        )
        told = (await h.responses(before + 1))[before:]
    ref = ChannelRef("slack", "C1", "T1")
    assert app.channels.vote_counts(ref, paper) == (1, 0)
    assert [r["text"] for r in told] == [VOTE_KEPT] and told[0]["response_type"] == "ephemeral"


def _args(slack, channel: str, user: str = "U1") -> SimpleNamespace:
    async def ack():
        pass

    ack.response = "acked"
    body = {"type": "block_actions", "user": {"id": user}, "channel": {"id": channel}}
    return SimpleNamespace(ack=ack, body=body, client=make_client("xoxb-test", slack.url))


@pytest.mark.parametrize(
    ("channel", "member", "where"),
    [("C1", True, "ephemeral"), ("C1", False, "dm"), ("CGONE", False, "dm")],
)
def test_an_ephemeral_answer_reaches_the_user_or_falls_back_to_a_dm(slack, channel, member, where):
    slack.members["C1"] = {"U1"} if member else {"U7"}
    slack.gone.add("CGONE")
    asyncio.run(answer(_args(slack, channel), "That paper is not in this digest."))
    shown = [m for m, a in slack.calls if m == "chat.postEphemeral"]
    dms = [a["text"] for m, a in slack.calls if m == "chat.postMessage" and a["channel"] == "U1"]
    assert shown and dms == ([] if where == "ephemeral" else ["That paper is not in this digest."])


def test_slack_a_deleted_header_sends_the_rest_inline_without_pausing(app, slack):
    """Break tried: thread_not_found from conversations.replies not read as "no thread" -> the
    recovery's look-up fails as rejected and the channel is paused (red)."""
    from tests.adapters.slack import test_slack_posting as sp

    ch = sp.channel(app)
    app.channels.settings.set_option(ch.ref, "threads", True)
    ch = app.store.channels.by_id(ch.id)
    _, plan = sp.crash_midway(app, slack, ch, sent=2, confirmed=1)
    header = slack.messages["C1"].pop(0)  # a moderator deleted the digest's first message
    slack.messages["C1"] = [m for m in slack.messages["C1"] if m.get("thread_ts") != header["ts"]]
    assert asyncio.run(sp.runner(app, slack, "host-2").recover()) == ["posted 5 papers"]
    assert not app.store.channels.by_id(ch.id).paused
    assert len(slack.arrived("C1")) == len(plan) - 1
    assert not any(m.get("thread_ts") for m in slack.arrived("C1"))
