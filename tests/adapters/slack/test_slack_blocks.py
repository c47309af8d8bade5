"""Block Kit rendering stays within Slack's limits and cannot be used to ping or inject links."""

from datetime import date

import pytest

from bot.adapters.slack.blocks import render, render_items, safe_url
from bot.commands.replies import digest_reply
from digest.delivery.compose import Digest, DigestItem
from digest.models import Channel, ChannelRef, Links, Paper
from tests.fakes.slack_limits import check

NASTY = [
    "x" * 10_000,
    "🤖" * 3000,
    "<!channel> read this <!here> <@U123> <#C999>",
    "@channel @here @everyone",
    "*bold* _it_ ~strike~ `code` ```block```",
    "<https://evil.example|click me> and <mailto:a@b.c>",
    "a|b>c<d&e",
]


def paper(i: int, title: str = "", url: str | None = None) -> Paper:
    return Paper(
        id=f"p{i}" + "x" * (100 if i % 7 == 0 else 0),
        source="jsonl",
        title=title or f"Paper number {i}",
        abstract_raw="",
        abstract=("An abstract with <!channel> and *stars* " * 40) if i % 2 else "Short abstract.",
        authors=tuple(f"Author {j} <@U{j}>" for j in range(12)),
        venue="NeurIPS 2026",
        links=Links(
            pdf=f"https://arxiv.org/pdf/{i}",
            abs=url or f"https://arxiv.org/abs/{i}",
            forum="javascript:alert(1)",
        ),
    )


def digest(n: int, titles=()) -> Digest:
    ch = Channel(id=1, ref=ChannelRef("slack", "C1", "T1"))
    items = tuple(
        DigestItem(
            i + 1, paper(i, titles[i] if i < len(titles) else ""), 0.5, "matches 'x': <!here> *y*"
        )
        for i in range(n)
    )
    return Digest(
        ch,
        date(2026, 12, 1),
        ("graphs", "<!channel>"),
        items,
        more=3,
        near_misses=2,
        considered=n + 10,
    )


def allowed(d: Digest) -> set[str]:
    return {safe_url(i.paper.links.abs) for i in d.items}


@pytest.mark.parametrize("n", [1, 25, 200])
def test_digests_of_any_size_respect_every_limit(n):
    d = digest(n)
    messages = render(digest_reply(d))
    for m in messages:
        check(m, allowed(d))
    assert sum(len(m.paper_ids) for m in messages) == n
    assert len(messages) == (1 if n <= 16 else -(-n // 16))
    assert messages[0].blocks[0]["type"] == "header"


def test_pathological_titles_are_escaped_and_cut():
    d = digest(len(NASTY), NASTY)
    for m in render(digest_reply(d)):
        check(m, allowed(d))
    parent, items = render_items(digest_reply(d))
    check(parent)
    for m in items:
        check(m, allowed(d))
    first = items[0].blocks[0]["text"]["text"]
    assert len(first) <= 3000 and first.endswith("…")
    mention = items[2].blocks[0]["text"]["text"]
    assert "&lt;!channel&gt;" in mention and "<!channel>" not in mention


def test_unsafe_urls_get_no_link_button():
    (m,) = render(digest_reply(digest(1)))
    urls = [
        e.get("url") for b in m.blocks for e in b.get("elements", []) if e.get("type") == "button"
    ]
    assert "https://arxiv.org/pdf/0" in urls and not any(
        u and u.startswith("javascript") for u in urls
    )
    assert safe_url("https://x.org/a|b>c") == "https://x.org/a%7Cb%3Ec"


def test_feedback_buttons_carry_the_paper_id():
    (m,) = render(digest_reply(digest(1)))
    actions = next(b for b in m.blocks if b["type"] == "actions")
    by_id = {e["action_id"]: e for e in actions["elements"]}
    assert by_id["vote_up"]["value"] == by_id["vote_down"]["value"] == by_id["more_like"]["value"]
