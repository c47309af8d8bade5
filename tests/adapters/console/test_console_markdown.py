"""The console and `digestbot cmd` show replies as a terminal reads them (issue 23): no raw
Markdown marks, links as 'text (url)', a liked title in quotes.

Breaks that turn this red: render() printing reply.text without readable(); readable() without
its code-span pass (backticks shown) or its link pass; render_card() printing the why-line raw
(*Title*); EMPHASIS matching inside words (snake_case loses its underscores)."""

from __future__ import annotations

from bot.adapters.console import readable, render
from bot.commands.replies import Card, Reply
from digest import BUNDLED_PAPERS
from tests.support.cli_proc import digestbot


def test_emphasis_code_and_links_read_as_plain_text():
    text = (
        "• *diffusion* — noise, score\n**Note**: use `/papers resume` or _pause_; "
        "see [the docs](https://example.org/d) or <https://example.org/s|Slack>."
    )
    assert readable(text) == (
        "• diffusion — noise, score\nNote: use /papers resume or pause; "
        "see the docs (https://example.org/d) or Slack (https://example.org/s)."
    )
    # what is not Markdown stays as typed
    assert (
        readable("snake_case_name, 2*3*4, a * b, `x_y_z`") == "snake_case_name, 2*3*4, a * b, x_y_z"
    )


def test_a_rendered_reply_shows_no_markdown_marks():
    card = Card(
        "p1", "A Title", None, "Ada", "V", "snippet", why="like *Old Paper*, which you liked"
    )
    out = render(Reply(text="Follow one with `/papers subscribe <topic>`: *RL*", cards=(card,)))
    assert "Follow one with /papers subscribe <topic>: RL" in out
    assert "why: like “Old Paper”, which you liked" in out
    assert "*" not in out and "`" not in out


def test_digestbot_cmd_prints_the_same_plain_text(tmp_path):
    assert digestbot(tmp_path, "ingest", str(BUNDLED_PAPERS)).returncode == 0
    shown = digestbot(tmp_path, "cmd", "console:lab", "/papers topics")
    assert shown.returncode == 0 and "Suggested topics" in shown.stdout and "•" in shown.stdout
    assert "*" not in shown.stdout and "`" not in shown.stdout
