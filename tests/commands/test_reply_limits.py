"""Answers to commands and buttons are held to the platform's limits as digests are (issue 23).

A paper whose link is too long for a button (Slack: 3,000 characters; Discord link buttons: 512)
loses that link on its own card only; the reply still arrives, checked by the strict fakes (which
refuse what Slack and Discord refuse, with the same validators the renderers use).

Breaks that turn this red: card_blocks keeping link buttons of any length (Slack refuses the
`paper` answer: invalid_blocks, nothing shown); card_row keeping link buttons over 512 characters
(Discord refuses `/papers paper` with 50035); the title link kept when it overflows the section
(cut mid-link); as_messages / _sends sending without checking (a reply that only the degraded
form fits is refused); degrading the whole message (the other card's links vanish).
"""

from __future__ import annotations

import json

import pytest

from bot.adapters.discord.embeds import render as discord_render
from bot.adapters.discord.limits import message_problems as discord_problems
from bot.adapters.discord.poster import payload
from bot.adapters.slack.blocks import SlackMessage
from bot.adapters.slack.blocks import render as slack_render
from bot.adapters.slack.limits import message_problems as slack_problems
from bot.adapters.slack.listeners import checked
from bot.commands.replies import Action, Card, Reply
from digest.models import Links, PaperRecord
from tests.adapters.slack.test_slack_http import Harness
from tests.fakes.slack import FakeSlack
from tests.support.discord_app import discord_app_bot, dispatch, embed_text, slash  # noqa: F401

LONG_SLACK = "https://example.org/paper?" + "x" * 3100
LONG_DISCORD = "https://example.org/paper?" + "y" * 596  # 622 characters, as reported


def long_paper(pid: str, url: str) -> PaperRecord:
    return PaperRecord(
        id=pid,
        source="jsonl",
        title="Sparse autoencoders at length",
        abstract_raw="",
        abstract="sparse autoencoders interpret features",
        authors=("Ada Lovelace",),
        venue="NeurIPS 2026",
        year=2026,
        links=Links(abs=url, pdf=url),
    )


def card(pid: str, url: str) -> Card:
    links = (Action("link", "PDF", url=url), Action("link", "arXiv", url=url))
    votes = (Action("up", "👍", value=pid), Action("down", "👎", value=pid))
    return Card(pid, f"Paper {pid}", url, "Ada", "NeurIPS", "s", actions=votes + links)


def test_one_long_url_degrades_only_its_own_card() -> None:
    """Slack and Discord: the long-URL card keeps its votes and loses its links; the other keeps all."""
    short = "https://arxiv.org/abs/2612.00001"
    for long in (LONG_SLACK, LONG_DISCORD):
        reply = Reply(text="Papers", cards=(card("long", long), card("ok", short)))
        for msg in slack_render(reply):
            assert slack_problems(msg.blocks, msg.text) == []
            acts = {b["block_id"]: b["elements"] for b in msg.blocks if b["type"] == "actions"}
            assert any("url" in e for e in acts["act:ok"])
            assert [e["action_id"] for e in acts["act:long"]][:2] == ["vote_up", "vote_down"]
            if long == LONG_SLACK:
                assert not any("url" in e for e in acts["act:long"])
        for msg in discord_render(reply):
            assert discord_problems(payload(msg)) == []
            links = [b.url for row in msg.rows for b in row if b.url]
            assert short in links and long not in links


def test_a_reply_only_its_degraded_form_fits_is_sent_degraded() -> None:
    """The reply path checks, as the poster does: an oversized link button is dropped."""
    bad = {
        "type": "actions",
        "elements": [
            {"type": "button", "text": {"type": "plain_text", "text": "PDF"}, "url": LONG_SLACK}
        ],
    }
    ok = {"type": "section", "text": {"type": "mrkdwn", "text": "hello"}}
    msg = checked(SlackMessage("hello", [ok, bad]))
    assert slack_problems(msg.blocks, msg.text) == [] and msg.blocks[0] == ok


@pytest.mark.asyncio
async def test_slack_paper_with_a_3000_char_link_is_answered(app):
    """`/papers paper` on such a paper: the answer arrives (the fake would refuse invalid_blocks)."""
    app.store.papers.upsert([long_paper("long-1", LONG_SLACK)])
    with FakeSlack() as slack:
        async with Harness(app, slack) as h:
            await h.done("subscribe sparse autoencoders")
            await h.done("paper long-1")
        answer = slack.responses()[-1]
    assert slack.rejected == []
    assert "Sparse autoencoders at length" in json.dumps(answer)
    assert "vote_up" in json.dumps(answer["blocks"])


@pytest.mark.asyncio
async def test_discord_paper_with_a_622_char_link_is_answered(bot):
    """`/papers paper` on such a paper: a follow-up Discord accepts, with the vote buttons."""
    bot.app.store.papers.upsert([long_paper("long-2", LONG_DISCORD)])
    await dispatch(bot.client, slash("paper", "tp", paper="long-2"))
    assert bot.fake.rejected == []
    sent = bot.fake.followups["tp"][0]
    assert "Sparse autoencoders at length" in embed_text(sent)
    assert any("custom_id" in b for row in sent["components"] for b in row["components"])


def test_a_discord_reply_only_its_degraded_form_fits_is_sent_degraded() -> None:
    """The same for Discord's follow-ups: a 622-character link button is dropped, votes stay."""
    from bot.adapters.discord.embeds import ButtonSpec, DiscordMessage
    from bot.adapters.discord.interact import checked as discord_checked

    rows = [[ButtonSpec("👍", custom_id="u:p1"), ButtonSpec("PDF", url=LONG_DISCORD)]]
    msg = discord_checked(DiscordMessage("hello", [], rows))
    assert discord_problems(payload(msg)) == [] and msg.rows == [rows[0][:1]]
