"""The shared per-platform validators flag what Slack and Discord reject, and pass what they take."""

from __future__ import annotations

from bot.adapters.discord import limits as dl
from bot.adapters.slack import limits as sl


def button(aid: str, url: str | None = None) -> dict:
    b = {"type": "button", "text": {"type": "plain_text", "text": "Open"}, "action_id": aid}
    return b | ({"url": url} if url else {})


def test_slack_accepts_a_plain_message_and_flags_each_broken_rule():
    ok = [{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}]
    assert sl.message_problems(ok, "hi") == []
    dup = [{"type": "actions", "elements": [button("a"), button("a")]}]
    assert any("duplicate action_id" in p for p in sl.message_problems(dup, "x"))
    long_url = [{"type": "actions", "elements": [button("a", "https://x/" + "a" * 3000)]}]
    assert any("url over 3000" in p for p in sl.message_problems(long_url, "x"))
    assert any("over 50 blocks" in p for p in sl.message_problems(ok * 51, "x"))
    assert sl.error_code(sl.message_problems(ok, "x" * 40_001)) == "msg_too_long"
    header = [{"type": "header", "text": {"type": "mrkdwn", "text": "h"}}]
    assert sl.message_problems(header, "x") == ["block 0 header: must be plain_text"]
    same_ids = [dict(ok[0], block_id="b"), dict(ok[0], block_id="b")]
    assert any("duplicate block_id" in p for p in sl.message_problems(same_ids, "x"))
    assert sl.view_problems({"type": "home", "blocks": ok * 100}) == []
    assert sl.view_problems({"type": "home", "blocks": ok * 101}) == ["over 100 blocks (101)"]


def link_row(url: str, label: str = "PDF") -> dict:
    return {"type": 1, "components": [{"type": 2, "style": 5, "label": label, "url": url}]}


def test_discord_accepts_a_normal_body_and_flags_each_broken_rule():
    assert dl.message_problems({"content": "hi", "components": [link_row("https://a")]}) == []
    assert dl.message_problems({"content": "x", "components": [link_row("https://" + "a" * 510)]})
    embed = {"title": "t", "description": "d" * 4000, "footer": {"text": "f" * 2048}}
    total = dl.message_problems({"embeds": [embed]})
    assert total == ["embeds total 6049 chars, over 6000"]
    assert dl.message_problems({"content": "x", "nonce": "n" * 26}) == ["nonce over 25 chars"]
    dup = {"type": 2, "style": 2, "label": "up", "custom_id": "dv:u:1"}
    body = {"content": "x", "components": [{"type": 1, "components": [dup, dup]}]}
    assert dl.message_problems(body) == ["duplicate custom_id 'dv:u:1'"]
    six_rows = [link_row("https://a")] * 6
    assert "over 5 action rows" in dl.message_problems({"content": "x", "components": six_rows})
    assert dl.error_body(["p"])["code"] == 50035


def test_the_delivery_key_ends_the_last_footer_uncut_and_the_message_stays_valid():
    import discord

    from bot.adapters.discord.embeds import DiscordMessage, stamp
    from tests.fakes.discord_limits import body

    full = discord.Embed(title="t", description="d" * 4096).set_footer(text="f" * 2048)
    key = "digest-12-2026-12-01#3"
    msg = stamp(DiscordMessage(embeds=[discord.Embed(description="x" * 1500), full]), key)
    assert msg.embeds[-1].footer.text.endswith(" · " + key)
    assert len(msg.embeds[-1].footer.text) <= 2048
    assert dl.message_problems(body(msg)) == []
