"""Who paused a channel reads the same everywhere: a person's name, or "the command line".

Repro: `list` said "paused by you" to the person who paused, `digestbot channels` showed
"paused by cli" (or a bare Slack id "U0123"), and a run's outcome read "paused (paused by …)".
Breaks that turn these red: `pause_cmd` naming `ctx.user` again (ids and "cli" come back);
`cmd` without `name="the command line"`; the Slack listener not passing `user_name`; the Home
toggle using the id; the Discord context without `display_name`; `list` rewriting the reason
as "paused by you" for its author; the runner's outcome wrapping the reason in "paused (…)".
"""

from __future__ import annotations

import asyncio
from datetime import date

import pytest

from bot.cli.main import main
from bot.commands.core import Context
from digest.models import ChannelRef, SubscriptionKind
from tests.adapters.slack.test_slack_behaviour import home_action
from tests.adapters.slack.test_slack_http import Harness, eventually
from tests.fakes.slack import FakeSlack
from tests.support.discord_app import discord_app_bot, dispatch, slash  # noqa: F401 - `bot`

LAB = ChannelRef("console", "lab")


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


def test_every_viewer_reads_the_same_name(app):
    say = app.commands.handle
    say("subscribe graphs", Context(LAB, "U0123", name="Ann"))
    say("pause", Context(LAB, "U0123", name="Ann"))
    for viewer in ("U0123", "U0999"):
        assert "(⏸ paused by Ann)" in say("list", Context(LAB, viewer)).text
    ch = app.store.channels.get(LAB)
    outcome = asyncio.run(app.runner_over({}).run_channel(ch.id, date.today()))
    assert outcome == "paused by Ann"
    say("resume", Context(LAB, "U0123"))
    say("pause", Context(LAB, "U0123"))  # no name known: the id, never "you"
    assert "(⏸ paused by U0123)" in say("list", Context(LAB, "U0123")).text


def test_the_command_line_names_itself(env_isolated, capsys):
    main(["subscribe", "console:lab", "graphs"])
    assert main(["cmd", "console:lab", "/papers pause"]) == 0
    capsys.readouterr()
    main(["channels"])
    assert "PAUSED (paused by the command line)" in capsys.readouterr().out
    main(["cmd", "console:lab", "/papers list"])
    assert "(⏸ paused by the command line)" in capsys.readouterr().out
    main(["cmd", "console:lab", "/papers resume"])
    main(["cmd", "--user", "bob", "console:lab", "/papers pause"])
    capsys.readouterr()
    main(["channels"])
    assert "PAUSED (paused by bob)" in capsys.readouterr().out


async def test_slack_names_the_person_by_their_handle(app, slack):
    ref = ChannelRef("slack", "C1", "T1")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "graphs")
    async with Harness(app, slack) as h:
        await h.done("pause", user_name="ann")
        assert app.store.channels.get(ref).paused_reason == "paused by ann"
        await h.done("resume")
        slack.members["C1"] = {"U1"}
        await home_action(h, "home_pause", str(app.store.channels.get(ref).id), name="bea")
        await eventually(lambda: app.store.channels.get(ref).paused)
    assert app.store.channels.get(ref).paused_reason == "paused by bea"


async def test_discord_names_the_person_by_their_display_name(bot):
    await dispatch(bot.client, slash("subscribe", "t1", topic="graphs"))
    await dispatch(bot.client, slash("pause", "t2", uid="42"))
    ch = bot.app.store.channels.get(ChannelRef("discord", "111", "77"))
    assert ch.paused and ch.paused_reason == "paused by user42"  # the fake's user 42
