"""Direct messages with the app (issue 11, items 10-12): DMs are `/papers me` commands, votes in a
personal digest count for that digest, and help arrives copyable. Signed HTTP against the fake.
"""

import asyncio
import json
from datetime import date

import pytest

from digest.models import ChannelRef
from tests.adapters.slack.test_slack_http import Harness, eventually
from tests.fakes.slack import FakeSlack

pytestmark = pytest.mark.asyncio


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


async def dm(h: Harness, text: str, user: str = "U1", **extra) -> None:
    """``user`` writes ``text`` to the app (so their IM with it exists, as in Slack)."""
    h.n += 1
    h.slack.open_im(user)
    event = {
        "type": "message",
        "channel_type": "im",
        "channel": f"D{user}",
        "user": user,
        "text": text,
        "ts": f"{h.n}.0001",
        "event_ts": f"{h.n}.0001",
        **extra,
    }
    assert (await h.event(event, event_id=f"Ev-dm-{h.n}")).status_code == 200


def said(slack: FakeSlack, channel: str) -> list[str]:
    return [
        json.dumps(a, ensure_ascii=False)
        for m, a in slack.calls
        if m == "chat.postMessage" and a["channel"] == channel
    ]


async def threaded_personal_digest(app, slack: FakeSlack, h: Harness, me: ChannelRef) -> list:
    """U1's personal digest set up in the DM with threads on and posted: the thread items that
    reached the DM, as the fake received them."""
    await dm(h, "subscribe diffusion models")
    await dm(h, "option threads on")
    await eventually(lambda: len(said(slack, "DU1")) == 2)
    ch = app.store.channels.get(me)
    assert (await h.digests.run_channel(ch.id, date(2026, 12, 1))).startswith("posted")
    return [m for m in slack.arrived("DU1") if m.get("thread_ts")]


async def test_direct_messages_are_personal_commands(app, slack):
    """Item 10. Break tried: register_messages not registered -> nothing answers (red)."""
    me = ChannelRef("slack", "@U1", "T1")
    async with Harness(app, slack) as h:
        await dm(h, "search graph neural networks")
        await eventually(lambda: len(said(slack, "DU1")) == 1)
        assert "papers match" in said(slack, "DU1")[0]
        await dm(h, "subscribe diffusion models")
        await eventually(lambda: len(said(slack, "DU1")) == 2)
        await dm(h, "a message from a bot", bot_id="B9")  # e.g. our own digest: not a command
        await dm(h, "edited", subtype="message_changed")
        await dm(h, "/papers me list")
        await eventually(lambda: len(said(slack, "DU1")) == 3)
    assert [s.text for s in app.channels.subscriptions(me)] == ["diffusion models"]
    assert "diffusion models" in said(slack, "DU1")[2]
    assert app.store.channels.get(ChannelRef("slack", "DU1", "T1")) is None
    assert slack.rejected == []


async def test_votes_in_a_personal_digest_count_for_it(app, slack):
    """Item 11. Break tried: channel_ref() not mapping D… to @user (the 👍 button lands on a
    stray 'DU1' channel and the personal digest never sees it: red). Reactions on thread items
    are looked up by the DM's D… id and, failing that, by the '@user' key of the digest."""
    me = ChannelRef("slack", "@U1", "T1")
    async with Harness(app, slack) as h:
        items = await threaded_personal_digest(app, slack, h, me)
        first = next(b for b in items[0]["blocks"] if b["type"] == "actions")
        paper = first["block_id"].removeprefix("act:")
        await h.action(
            {
                "action_id": "vote_up",
                "value": paper,
                "type": "button",
                "block_id": first["block_id"],
            },
            message=items[0],
            channel="DU1",
        )
        await eventually(lambda: app.channels.vote_counts(me, paper) == (1, 0))
        second = next(b for b in items[1]["blocks"] if b["type"] == "actions")
        reaction = {
            "type": "reaction_added",
            "user": "U1",
            "reaction": "-1",
            "event_ts": "9",
            "item": {"type": "message", "channel": "DU1", "ts": items[1]["ts"]},
        }
        await h.event(reaction, event_id="Ev-react-dm")
        other = second["block_id"].removeprefix("act:")
        await eventually(lambda: app.channels.vote_counts(me, other) == (0, 1))
    assert app.store.channels.get(ChannelRef("slack", "DU1", "T1")) is None


async def test_reactions_reach_a_personal_digest_recorded_under_the_user_key(app, slack):
    """The '@user' fallback: a personal digest's message recorded as '@U1:ts' (the digest's own
    key, not the DM's D… id) still takes 👍/👎 reactions made in the DM; nowhere else does.

    Breaks seen red: drop `refs.append(f"@{user}:{ts}")` in register_reactions (no vote); the
    fallback for every channel, not only D… ones (the reaction in C9 votes 👎)."""
    from sqlalchemy import update
    from sqlalchemy.orm import Session

    from digest.store.schema import DeliveryItemRow

    me = ChannelRef("slack", "@U1", "T1")
    async with Harness(app, slack) as h:
        item = (await threaded_personal_digest(app, slack, h, me))[0]
        actions = next(b for b in item["blocks"] if b["type"] == "actions")
        paper = actions["block_id"].removeprefix("act:")
        with Session(app.store.engine) as session:  # as recorded under the digest's user key
            session.execute(
                update(DeliveryItemRow)
                .where(DeliveryItemRow.message_ref == f"DU1:{item['ts']}")
                .values(message_ref=f"@U1:{item['ts']}")
            )
            session.commit()

        async def react(channel: str, user: str, name: str, event_id: str) -> None:
            event = {
                "type": "reaction_added",
                "user": user,
                "reaction": name,
                "event_ts": "9",
                "item": {"type": "message", "channel": channel, "ts": item["ts"]},
            }
            assert (await h.event(event, event_id=event_id)).status_code == 200

        await react("C9", "U1", "-1", "Ev-c9")  # the same ts in a channel: not this digest
        await asyncio.sleep(0.5)
        assert app.channels.vote_counts(me, paper) == (0, 0)
        await react("DU1", "U1", "thumbsdown::skin-tone-3", "Ev-dm-down")
        await eventually(lambda: app.channels.vote_counts(me, paper) == (0, 1))
    assert slack.rejected == []


async def test_help_is_copyable_and_data_still_escaped(app, slack):
    """Item 12. Break tried: reply text rendered with plain() again (a zero-width space after
    every backtick: red)."""
    async with Harness(app, slack) as h:
        await h.done("help")
        shown = json.dumps(slack.responses()[-1], ensure_ascii=False)
        await h.done("subscribe *bold* `tick <!channel> <@U9>")
        echoed = json.dumps(slack.responses()[-1], ensure_ascii=False)
    assert "`/papers subscribe" in shown and "\u200b" not in shown
    assert "<!channel>" not in echoed and "<@U9>" not in echoed and "&lt;!channel&gt;" in echoed


async def test_a_failing_dm_command_is_answered_in_the_dm(app, slack, monkeypatch):
    """Item 5 for DMs. Break tried: guard.answer without the DM branch (nothing arrives: red)."""

    def boom(text, ctx):
        raise RuntimeError("bug")

    async with Harness(app, slack) as h:
        monkeypatch.setattr(h.deps.commands, "handle", boom)
        await dm(h, "search anything")
        await eventually(lambda: len(said(slack, "DU1")) == 1)
    assert "Something went wrong" in said(slack, "DU1")[0]
