"""Chat and CLI edges an outside tester found: quotes in why-lines, schedule words, query files."""

from datetime import UTC, datetime

from bot.commands import Context
from digest.models import ChannelRef
from digest.rank.why import quote

LAB = ChannelRef("console", "lab")
NOW = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


def say(app, text: str):
    ctx = Context(ref=LAB, user="ann", is_admin=True, dm=ChannelRef("console", "@ann"), now=NOW)
    return app.commands.handle(text, ctx)


def test_why_line_does_not_double_a_quote_typed_at_the_query_edge(app):
    """A query typed with a quote at its edge is quoted once: `'x` reads 'x', never ''x'.

    Breaks that turn this red: the edge strip in why.quote removed (the why-line reads
    ``matches ''OR 1=1 ...``); stripping every quote, also inside words (don't -> dont).
    """
    reply = say(app, "search 'OR 1=1; sparse classifier;--")
    why = reply.cards[0].why
    assert why.startswith("matches 'OR 1=1; sparse classifier;--': "), why
    assert quote('"graph neural networks"') == "'graph neural networks'"
    assert quote("don't stop") == "'don't stop'"
    assert quote("''") == "''''"  # nothing but quotes: shown as typed, not as ''


def test_queries_file_refuses_a_json_line_that_is_not_an_object(env_isolated, capsys, tmp_path):
    """`["sparse"]`, `"just a string"` or `42` on a line is a bad line (one error naming file and
    line, nothing searched), not a search for the raw text with its brackets and quotes.

    Breaks that turn this red: the `_not_a_json_value` call removed (exit 0, the raw line
    searched); it raising for any line (plain `grokking` refused, the last assertion).
    """
    from bot.cli import main

    queries = tmp_path / "q.txt"
    for bad, kind in (('["sparse"]', "a list"), ('"just a string"', "text in quotes"),
                      ("42", "a number"), ("null", "null")):  # fmt: skip
        queries.write_text(f"grokking\n\n{bad}\nalignment\n")
        code = main(["search", "--queries-file", str(queries)])
        out, err = capsys.readouterr()
        assert code == 2 and not out, (bad, out)
        assert err.startswith(f"error: {queries}:3: a JSON value ({kind}), not a query"), err
        assert len(err.strip().splitlines()) == 1
    queries.write_text("grokking\nsparse [autoencoders]\n")
    assert main(["search", "--queries-file", str(queries)]) == 0
