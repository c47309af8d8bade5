"""The bot checks a Home view and a command list with the platforms' rules before sending them.

Breaks tried (each went red): publish_home without view_problems -> the fake refuses the view
(``slack.rejected``); sync_global without check() -> the refused command list reaches Discord
(a PUT in ``fake.calls``) and the start-up sync raises instead of keeping the old commands.
"""

from __future__ import annotations

import logging

import pytest

from bot.adapters.discord import sync
from bot.adapters.slack import events
from digest.errors import DigestError
from tests.adapters.slack.test_slack_http import Harness, eventually
from tests.fakes.slack import FakeSlack
from tests.support.discord_app import discord_app_bot  # noqa: F401 - the `bot` fixture

pytestmark = pytest.mark.asyncio


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


async def test_a_home_view_slack_would_refuse_is_logged_and_a_stub_shown(
    app, slack, monkeypatch, caplog
):
    block = {"type": "divider"}
    monkeypatch.setattr(events, "home_view", lambda *a: {"type": "home", "blocks": [block] * 101})
    async with Harness(app, slack) as h:
        with caplog.at_level(logging.ERROR):
            await h.event({"type": "app_home_opened", "user": "U1", "tab": "home", "event_ts": "1"})
            await eventually(lambda: any(m == "views.publish" for m, _ in slack.calls))
    (published,) = [a["view"] for m, a in slack.calls if m == "views.publish"]
    assert slack.rejected == [] and "/papers list" in str(published)
    assert "Slack would refuse it: over 100 blocks" in caplog.text


async def test_a_command_list_discord_would_refuse_is_never_sent(bot, caplog):
    papers = bot.client.tree.get_command("papers")
    papers.description = "x" * 101  # over Discord's 100 characters
    with pytest.raises(DigestError, match="Discord would refuse them"):
        await sync.sync_global(bot.client.tree, bot.app.channels.notes)
    with pytest.raises(DigestError):
        await sync.sync_guild(bot.client.tree, bot.app.channels.notes, 77, remove=False)
    with caplog.at_level(logging.ERROR):
        assert await bot.client.sync_if_changed() is False  # what `digestbot run` does at start
    assert not any(m == "PUT" for m, _, _ in bot.fake.calls) and bot.fake.synced == {}
    assert "not synced globally" in caplog.text
