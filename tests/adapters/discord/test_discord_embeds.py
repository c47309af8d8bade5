"""Discord rendering stays within every limit and cannot ping or inject links."""

import pytest

from bot.adapters.discord.embeds import render
from bot.commands.replies import digest_reply
from tests.adapters.slack.test_slack_blocks import NASTY, digest
from tests.fakes.discord_limits import check

NASTY_DISCORD = NASTY + [
    "@everyone look",
    "<@123456> <@&987> <@!42>",
    "[click](https://evil.example) **bold**",
]


@pytest.mark.parametrize("n", [1, 25, 200])
def test_digests_of_any_size_respect_every_limit(n):
    messages = render(digest_reply(digest(n)))
    for m in messages:
        check(m)
    assert sum(len(m.paper_ids) for m in messages) == n
    assert messages[0].embeds[0].title.startswith("📚 Papers for")


def test_pathological_text_is_escaped_and_cut():
    d = digest(len(NASTY_DISCORD), NASTY_DISCORD)
    messages = render(digest_reply(d))
    for m in messages:
        check(m)
    titles = [e.title for m in messages for e in m.embeds]
    assert any(t.endswith("…") and len(t) == 256 for t in titles)


def test_buttons_carry_paper_ids_in_short_custom_ids():
    (m,) = render(digest_reply(digest(2)))  # paper 0 has a 102-character id, paper 1 a short one
    long_row, short_row = m.rows
    ids = ["dv:u:p1", "dv:d:p1", "dv:m:p1", "dv:z:p1"]
    assert [b.custom_id for b in short_row if b.custom_id] == ids
    assert [
        b.custom_id for b in long_row if b.custom_id
    ] == []  # would exceed Discord's 100 characters
    # five buttons a row: with 📚 Save to Zotero, the PDF only (the embed's title links the abstract)
    assert [b.url for b in short_row if b.url] == ["https://arxiv.org/pdf/1"]


def test_two_links_on_one_line_are_both_neutralised():
    # Found by the fuzz suite: discord.utils.escape_markdown only escapes the first of these.
    from bot.adapters.discord.embeds import safe

    assert (
        safe("[x](https://evil.example) [y](https://e.example)")
        == r"\[x](https://evil.example) \[y](https://e.example)"
    )
