"""Text with nothing visible (zero-width, format characters, spaces or punctuation only) is refused
like an empty argument wherever it would be stored or searched for.

Breaks that turn this red: clean_topic back to `if not topic` (U+200B is followed and listed as
'\\u200b'); exclude_cmd back to `args.raw.strip()`; search_cmd back to `if not args.text` ("No paper
mentions ..."); the CLI's search check back to `query.strip()` (exit 0 with no results).
"""

import pytest

from digest.models import ChannelRef
from tests.commands.test_commands import say
from tests.support.cli_proc import digestbot, one_error

INVISIBLE = ["\u200b", "\u200b\u200c\u2060", "\ufeff", "\u00ad", "...", " - ", "\u3000\u200b"]


@pytest.mark.parametrize("text", INVISIBLE)
def test_invisible_topics_exclusions_authors_and_searches_are_refused(app, text):
    for command, needle in (
        ("subscribe", "Say what to follow"),
        ("exclude", "Say what to exclude"),
        ("subscribe author:", "Say what to follow"),
        ("search", "Search for what?"),
    ):
        reply = say(app, f"{command} {text}")
        assert reply.error and needle in reply.text, (command, text, reply.text)
    ch = app.store.channels.get(ChannelRef("console", "lab"))
    assert ch is None or app.channels.subscriptions(ch.ref) == []


def test_visible_text_with_a_zero_width_space_is_still_a_topic(app):
    assert "Now following topic" in say(app, "subscribe graph\u200b networks").text
    # A symbol is visible (not "say what to follow"), but no paper can be matched on it.
    assert "has no word a paper can be matched on" in say(app, "subscribe 🔥").text


@pytest.mark.parametrize("query", ["\u200b", "?!"])
def test_cli_search_refuses_invisible_queries(tmp_path, query):
    assert "Type a topic" in one_error(digestbot(tmp_path, "search", query))
    qfile = tmp_path / "q.txt"
    qfile.write_text(f"graphs\n{query}\n", encoding="utf-8")
    assert f"{qfile}:2: no letters or digits" in one_error(
        digestbot(tmp_path, "search", "--queries-file", str(qfile))
    )
