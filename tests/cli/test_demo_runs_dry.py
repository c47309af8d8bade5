"""When no new paper is left, the digest says how to get more (issue 23: the demo runs dry on
its third day with no next step).

Breaks that turn this red: Digest.summary() without FEED_HINT when nothing new was considered;
summary_line() without it for an upcoming digest.
"""

from __future__ import annotations

from datetime import date

from bot.commands.replies import summary_line
from digest.delivery.compose import Digest
from digest.models import ChannelRef


def test_a_dry_digest_names_the_feed_setting_and_the_ingest_command(app) -> None:
    lab = ChannelRef("console", "lab")
    channel = app.channels.channel(lab)
    dry = Digest(channel, date(2026, 12, 3), ("graphs",), (), considered=0)
    for line in (dry.summary(), summary_line(dry, upcoming=True)):
        assert "DIGESTBOT_ARXIV_QUERIES" in line and "digestbot ingest arxiv:" in line
    some = Digest(channel, date(2026, 12, 3), ("graphs",), (), considered=4)
    assert "DIGESTBOT_ARXIV_QUERIES" not in some.summary()
