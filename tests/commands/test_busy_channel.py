"""Crash recovery in a busy channel: more messages than one history page arrived after our part.

Checked on what the fake channel holds, not on the bot's ledger. Breaks tried (each went red):
- find_part reads one page (Slack: one conversations.history call; Discord: history(limit=100))
  -> the part is missed and posted a second time (two copies in the channel; on Discord once
  the nonce has expired, as it does after a few minutes);
- find_part ignores the scan cap's end (returns None instead of raising "unsure") -> a second copy
  in test_an_unreadable_backlog_is_retried_not_reposted;
- claimed_at from the process clock shifted by an hour (DB clock ignored) -> search starts after
  the part: a second copy.
"""

import asyncio

import pytest

from bot.adapters.discord import poster as discord_poster
from bot.adapters.slack import poster as slack_poster
from tests.adapters.discord import test_discord_posting as dp
from tests.adapters.slack import test_slack_posting as sp
from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")  # the bot was invited to them; a post anywhere else is refused
        yield fake


@pytest.fixture
def fake(monkeypatch):
    with FakeDiscord() as f:
        monkeypatch.setattr(dp.discord.http.Route, "BASE", f.base)
        yield f


def _ours_in_slack(slack, channel: str) -> list[dict]:
    return [m for m in slack.arrived(channel) if (m.get("metadata") or {}).get("event_type")]


def test_slack_recovery_pages_back_to_the_claim_and_posts_nothing_twice(app, slack):
    ch = sp.channel(app)
    sp.crash_midway(app, slack, ch, sent=1, confirmed=0)
    slack.chatter("C1", 450)  # more than two pages of 200 after our header
    assert asyncio.run(sp.runner(app, slack, "host-2").recover()) == ["posted 5 papers"]
    assert len(_ours_in_slack(slack, "C1")) == 1 and len(slack.arrived("C1")) == 451
    reads = [a for m, a in slack.calls if m == "conversations.history"]
    assert len(reads) == 3 and all(float(a["oldest"]) > 0 for a in reads)


def test_slack_threaded_recovery_finds_a_reply_in_a_long_thread(app, slack):
    ch = sp.channel(app)
    app.channels.settings.set_option(ch.ref, "threads", True)
    ch = app.store.channels.by_id(ch.id)
    sp.crash_midway(app, slack, ch, sent=2, confirmed=1)
    header = slack.arrived("C1")[0]["ts"]
    for i in range(300):  # people reply in the digest's thread after our first paper
        slack.messages["C1"].append(
            {"ts": slack.new_ts(), "user": "U2", "thread_ts": header, "text": f"reply {i}"}
        )
    assert asyncio.run(sp.runner(app, slack, "host-2").recover()) == ["posted 5 papers"]
    assert len(_ours_in_slack(slack, "C1")) == 6


def test_an_unreadable_backlog_is_retried_not_reposted(app, slack, monkeypatch):
    monkeypatch.setattr(slack_poster, "MAX_PAGES", 2)
    ch = sp.channel(app)
    sp.crash_midway(app, slack, ch, sent=1, confirmed=0)
    slack.chatter("C1", 450)
    (outcome,) = asyncio.run(sp.runner(app, slack, "host-2").recover())
    assert outcome.startswith("retrying at") and "not re-posting while unsure" in outcome
    assert len(_ours_in_slack(slack, "C1")) == 1


def test_discord_recovery_pages_past_100_messages_and_posts_nothing_twice(app, fake):
    ch = dp.channel(app)

    async def scenario(p):
        _, _, crashed = dp.crash_midway(app, p, ch, sent=1, confirmed=0)
        await crashed
        fake.chatter("111", 250)
        fake.nonce_window = 0  # recovery came after Discord's few minutes of nonce memory
        return await dp.runner(app, p, "host-2").recover()

    assert dp.run(app, fake, scenario) == ["posted 5 papers"]
    ours = [m for m in fake.arrived("111") if m["author"]["id"] == "1000"]
    assert len(ours) == 1 and len(fake.arrived("111")) == 251
    reads = [p for m, p, _ in fake.calls if m == "GET" and p == "/channels/111/messages"]
    assert 1 <= len(reads) <= 3


def test_discord_unsure_when_the_scan_cap_is_reached(app, fake, monkeypatch):
    monkeypatch.setattr(discord_poster, "MAX_SCAN", 100)
    ch = dp.channel(app)

    async def scenario(p):
        _, _, crashed = dp.crash_midway(app, p, ch, sent=1, confirmed=0)
        await crashed
        fake.chatter("111", 150)  # after our part (read newest first): the cap is spent on them
        fake.nonce_window = 0
        return await dp.runner(app, p, "host-2").recover()

    (outcome,) = dp.run(app, fake, scenario)
    assert outcome.startswith("retrying at") and "unsure" in outcome
    assert sum(m["author"]["id"] == "1000" for m in fake.arrived("111")) == 1
