"""10,000 hostile command texts: no crash, every reply within platform limits, no mass mention."""

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.adapters.discord.embeds import render as render_discord
from bot.adapters.slack.blocks import render as render_slack
from bot.commands import Context
from bot.commands.core import REGISTRY
from digest.models import ChannelRef
from tests.fakes.discord_limits import check as check_discord
from tests.fakes.slack_limits import check as check_slack

HOSTILE = st.sampled_from(
    [
        "<!channel>",
        "<!here>",
        "<!everyone>",
        "@everyone",
        "@here",
        "<@U123>",
        "<@&42>",
        "<#C1>",
        "*bold* _it_ ~s~ `c`",
        "[x](https://evil.example)",
        "<https://evil.example|click>",
        "'; DROP TABLE papers;--",
        "\x00\x01\x1b[31m",
        "\u202e\u200b\ufeff",
        "🤖" * 50,
        "x" * 100_000,
        "é" * 3000,
        "图神经网络",
        "page:999999",
        "year:0000",
        'author:"',
        "venue:'",
        "like:",
        "author:",
        "²³¹",
        "9" * 400,
    ]
)
TEXTS = st.one_of(
    st.text(max_size=500),
    st.lists(HOSTILE, min_size=1, max_size=4).map(" ".join),
    st.builds(
        lambda c, parts: f"/papers {c} {' '.join(parts)}",
        st.sampled_from(sorted(REGISTRY) + ["me", "me subscribe", "subscribe author:", "search"]),
        st.lists(st.one_of(HOSTILE, st.text(max_size=60)), max_size=3),
    ),
)
STATS = {"examples": 0, "seconds": 0.0}


@settings(
    max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck), database=None
)
@given(text=TEXTS, admin=st.booleans(), platform=st.sampled_from(["slack", "discord", "console"]))
def _fuzz(app, text, admin, platform):
    ctx = Context(
        ref=ChannelRef(platform, "C1", "T1"),
        user="U1",
        is_admin=admin,
        dm=ChannelRef(platform, "@U1", "T1"),
    )
    reply = app.commands.handle(text, ctx)
    assert reply.text or reply.cards
    assert "Something went wrong" not in reply.text  # the safety net caught a bug
    for msg in render_slack(reply):
        check_slack(
            msg,
            {a.url for c in reply.cards for a in c.actions if a.url} | {c.url for c in reply.cards},
        )
    for msg in render_discord(reply):
        check_discord(msg)
    STATS["examples"] += 1


def test_ten_thousand_hostile_commands(app):
    started = time.monotonic()
    _fuzz(app)
    STATS["seconds"] = time.monotonic() - started
    print(f"\nfuzz: {STATS['examples']} commands, 0 crashes, {STATS['seconds']:.1f} s")
    assert STATS["examples"] >= 10_000
