"""A personal digest reads as a person's, never as a raw Slack id.

Repro: `pause` written to the app in its DM stored "paused by U1" (a message event carries no
name), a Home-tab pause without a handle in the payload did the same, and `/papers list` typed
in the DM was titled "Channel @U1" (the `@user` key shown as a channel name).
"""

from __future__ import annotations

import json

import pytest

from bot.commands.core import Context
from digest.models import ChannelRef, SubscriptionKind
from tests.adapters.slack.test_slack_behaviour import home_action
from tests.adapters.slack.test_slack_dm import dm, said
from tests.adapters.slack.test_slack_http import Harness, eventually
from tests.fakes.slack import FakeSlack

ME = ChannelRef("slack", "@U1", "T1")


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


async def test_pausing_in_the_dm_names_the_person(app, slack):
    """Breaks that turn this red: the DM listener building its Context without
    ``name=await user_name(...)`` ("paused by U1"); user_name() reading another field than the
    handle; the fake's users.info without ``name``; the name asked for on every DM command
    (three users.info calls, not one)."""
    async with Harness(app, slack) as h:
        await dm(h, "subscribe diffusion models")
        await eventually(lambda: len(said(slack, "DU1")) == 1)
        await dm(h, "pause")
        await eventually(lambda: app.store.channels.get(ME).paused)
        await dm(h, "list")
        await eventually(lambda: len(said(slack, "DU1")) == 3)
    assert app.store.channels.get(ME).paused_reason == "paused by ann"
    # Slack is asked for the name once, for the pause: not for every DM command.
    assert [m for m, _ in slack.calls if m == "users.info"] == ["users.info"]
    listing = said(slack, "DU1")[2]
    assert "paused by ann" in listing and "U1" not in listing.replace("DU1", "")


async def test_a_home_pause_without_a_handle_asks_slack_for_it(app, slack):
    """Breaks that turn this red: the Home toggle falling back to the id without asking
    users.info ("paused by U1")."""
    app.channels.follows.add(ME, SubscriptionKind.TOPIC, "graphs")
    async with Harness(app, slack) as h:
        await home_action(h, "home_pause", str(app.store.channels.get(ME).id))  # no name sent
        await eventually(lambda: app.store.channels.get(ME).paused)
    assert app.store.channels.get(ME).paused_reason == "paused by ann"


async def test_list_typed_in_the_dm_is_titled_as_the_personal_digest(app, slack):
    """`/papers list` typed in the DM with the app (channel D…, no `me`) is the personal
    digest's list. Breaks that turn this red: Commands._run not marking an `@user` ref as
    personal (title "Channel @U1", hint without `me`)."""
    app.channels.follows.add(ME, SubscriptionKind.TOPIC, "graphs")
    async with Harness(app, slack) as h:
        await h.done("list", channel="DU1", user_name="ann")
    answer = json.dumps(slack.responses()[-1], ensure_ascii=False)
    assert "Your personal digest" in answer and "@U1" not in answer
    reply = app.commands.handle("list", Context(ME, "U1"))
    assert reply.title == "Your personal digest"
