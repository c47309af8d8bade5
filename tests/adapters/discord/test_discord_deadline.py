"""Discord's clock on interactions: the initial response within 3 s, of a type the interaction
takes. The fake refuses a late one with 404 / 10062 and records it in ``late``.

Breaks tried (each went red):
- run() defers after the core has answered -> the late type 5 is refused, nothing reaches the user;
- paper_choices without its search budget -> the autocomplete answer comes after 3 s (refused).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta

import pytest
from discord.utils import time_snowflake

from tests.fakes.discord import FakeDiscord
from tests.fakes.discord_interactions import ISSUED, issue
from tests.support.discord_app import (
    autocomplete,
    discord_app_bot,  # noqa: F401 - the `bot` fixture
    dispatch,
    slash,
)

SLOW = 3.5  # seconds: longer than Discord waits for the initial response


@pytest.mark.asyncio
async def test_a_slow_command_is_deferred_in_time_and_answered_after(bot, monkeypatch):
    core = bot.app.commands.invoke

    def slow(*a, **kw):
        time.sleep(SLOW)
        return core(*a, **kw)

    monkeypatch.setattr(bot.app.commands, "invoke", slow)
    await dispatch(bot.client, slash("topics", "slow1"))
    assert [a["type"] for a in bot.fake.acks["slow1"]] == [5] and bot.fake.late == []
    assert bot.fake.followups["slow1"]  # the answer came as a follow-up, after 3 s


@pytest.mark.asyncio
async def test_a_slow_paper_search_still_answers_autocomplete_in_time(bot, monkeypatch):
    search = bot.app.channels.papers.search

    def slow(*a, **kw):
        time.sleep(SLOW)
        return search(*a, **kw)

    monkeypatch.setattr(bot.app.channels.papers, "search", slow)
    await dispatch(bot.client, autocomplete("paper", "ac-slow", "paper", "syn-diffusion-1"))
    (ack,) = bot.fake.acks["ac-slow"]
    assert ack["type"] == 8 and bot.fake.late == []
    assert [c["value"] for c in ack["data"]["choices"]] == ["syn-diffusion-1"]  # the exact id


def _callback(fake: FakeDiscord, iid: str, token: str, kind: int) -> tuple[int, int | None]:
    body = json.dumps({"type": kind, "data": {"content": "hi"}}).encode()
    req = urllib.request.Request(
        f"{fake.base}/interactions/{iid}/{token}/callback",
        body,
        {"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, None
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()).get("code")


def test_the_fake_refuses_update_message_for_commands_and_late_answers():
    with FakeDiscord() as fake:
        assert _callback(fake, issue(2), "t1", 7) == (400, 50035)  # type 7: components only
        assert _callback(fake, issue(3), "t2", 7) == (200, None)
        old = str(time_snowflake(datetime.now(UTC) - timedelta(seconds=4)))
        ISSUED[old] = 2
        assert _callback(fake, old, "t3", 5) == (404, 10062) and fake.late[0][0] == "t3"
        assert _callback(fake, "123", "t4", 4) == (404, 10062)  # never issued
