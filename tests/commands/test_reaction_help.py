"""Help says where 👍/👎 reactions count (issue 23): only on a message showing one paper.

Breaks that turn this red: the REACTIONS line dropped from help_reply (users react to an inline
or DM digest and nothing is recorded, with nothing saying so).
"""

from __future__ import annotations

from bot.commands import Context
from digest.models import ChannelRef


def test_help_says_reactions_need_a_one_paper_message(app) -> None:
    ctx = Context(ref=ChannelRef("console", "lab", ""), user="ann")
    text = app.commands.handle("help", ctx).text
    assert "reaction" in text and "one paper" in text and "threads on" in text
    assert "asked privately which one you meant" in text  # a multi-paper message asks
