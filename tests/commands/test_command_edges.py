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
    from bot.cli.main import main

    queries = tmp_path / "q.txt"
    for bad, kind in (
        ('["sparse"]', "a list"),
        ('"just a string"', "text in quotes"),
        ("42", "a number"),
        ("null", "null"),
    ):
        queries.write_text(f"grokking\n\n{bad}\nalignment\n")
        code = main(["search", "--queries-file", str(queries)])
        out, err = capsys.readouterr()
        assert code == 2 and not out, (bad, out)
        assert err.startswith(f"error: {queries}:3: a JSON value ({kind}), not a query"), err
        assert len(err.strip().splitlines()) == 1
    queries.write_text("grokking\nsparse [autoencoders]\n")
    assert main(["search", "--queries-file", str(queries)]) == 0


def test_schedule_says_which_parts_it_kept(app):
    """Omitted time zone or days keep their values, and the reply says so: after `09:30 UTC mon`,
    `02:30 Europe/Berlin` must not read as if mon had just been chosen.

    Breaks that turn this red: the `unchanged` note dropped from schedule_cmd (the tester's
    silent carry-over); the note naming a part that was given (`days` when days were typed).
    """
    assert say(app, "schedule 09:30 UTC mon").text == "Digests at 09:30 UTC on mon."
    reply = say(app, "schedule 02:30 Europe/Berlin")
    assert reply.text == "Digests at 02:30 Europe/Berlin on mon (days unchanged)."
    reply = say(app, "schedule 8:00")
    assert reply.text == "Digests at 08:00 Europe/Berlin on mon (time zone and days unchanged)."
    assert say(app, "schedule 8:00 weekdays").text.endswith("(time zone unchanged).")


def test_schedule_refuses_two_days_values(app):
    """`09:30 UTC daily weekends` is one short error about the days, not "Unknown time zone
    'UTC weekends'"; the schedule stays as it was.

    Breaks that turn this red: the `len(given) > 1` check removed (the zone error comes back).
    """
    say(app, "schedule 09:30 UTC mon")
    for typed in ("09:30 UTC daily weekends", "09:30 daily weekends", "10:00 UTC mon tue"):
        reply = say(app, f"schedule {typed}")
        assert reply.error and reply.text.startswith("One days value only, got "), reply.text
        assert "time zone" not in reply.text and len(reply.text) < 200
    assert "Schedule: 09:30 UTC" in say(app, "list").text


def test_search_with_a_lone_surrogate_is_one_error_line(env_isolated, capsys, tmp_path):
    """A command-line query with bytes that are not UTF-8 (a lone surrogate to Python) failed in
    the encoder as `error: TypeError: TextEncodeInput …`; a queries-file `"\\ud800"` escape too.

    Breaks that turn this red: the has_surrogates check in cli_papers.search_cmd removed (an
    UnicodeEncodeError or TypeError line); the one in cli_input._query_line removed (no file:line).
    """
    from bot.cli.main import main
    from digest import BUNDLED_PAPERS

    main(["ingest", str(BUNDLED_PAPERS)])
    capsys.readouterr()
    assert main(["search", "attack \udcff", "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert err == "error: The query holds a broken character (not UTF-8); please retype it.\n"
    queries = tmp_path / "q.txt"
    queries.write_text('grokking\n{"query": "attack \\ud800"}\n')
    assert main(["search", "--queries-file", str(queries)]) == 2
    out, err = capsys.readouterr()
    assert not out and err.startswith(f"error: {queries}:2: 'query' holds a lone surrogate"), err
