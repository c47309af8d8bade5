"""A mistyped command gets a "did you mean" with the command it most likely meant, by the same
closeness for every platform (the console, `digestbot cmd`, Slack and Discord all reach here).

Breaks that turn this red: `unknown_command` without difflib (the old "Try `/papers help`"
only); the `/`-prefixed branch removed (`/paper list` suggests nothing); a cutoff so loose that
an unrelated word ('blah') gets a suggestion."""

from __future__ import annotations

import pytest

from tests.commands.test_commands import say


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("/papers schedual 9am", "/papers schedule"),
        ("/papers subscirbe grokking", "/papers subscribe"),
        ("subscirbe grokking", "/papers subscribe"),
        ("/papers serach sparse", "/papers search"),
        ("/paper list", "/papers"),
        ("/papper list", "/papers"),
    ],
)
def test_a_mistyped_command_gets_the_one_it_meant(app, typed, meant):
    reply = say(app, typed)
    assert reply.error and "Unknown command" in reply.text
    assert f"did you mean `{meant}`?" in reply.text, reply.text


def test_a_word_close_to_no_command_gets_no_guess(app):
    reply = say(app, "/papers blah")
    assert reply.error and "did you mean" not in reply.text and "/papers help" in reply.text
