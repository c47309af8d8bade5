"""Numbers in commands read the same whatever the keyboard: full-width digits are ASCII everywhere.

Repro: `/papers schedule 0９:00` was accepted but `/papers size ２` refused. Breaks tried on
purpose (each turned a test red): `numeric_text` dropped from `set_size`, from `parse_time`
(then '٠٩:٠٠' in Arabic-Indic digits was accepted by `\\d`), from `set_threshold`.
"""

from __future__ import annotations

import json

import pytest

from bot.commands.core import Context
from digest.models import ChannelRef

LAB = ChannelRef("console", "lab")


def say(app, text: str):
    return app.commands.handle(text, Context(LAB, "ann"))


@pytest.mark.parametrize(
    ("typed", "ascii_"),
    [
        ("schedule ０９：３０", "schedule 09:30"),
        ("schedule 0９:00", "schedule 09:00"),
        ("size ２", "size 2"),
        ("size １２", "size 12"),
        ("threshold ０．５", "threshold 0.5"),
    ],
)
def test_full_width_numbers_mean_the_ascii_ones(app, typed, ascii_):
    full = say(app, typed)
    assert not full.error, full.text
    assert full.text == say(app, ascii_).text


@pytest.mark.parametrize(
    "typed", ["size ٢", "schedule ٠٩:٠٠", "threshold ٠.٥", "size ²", "schedule ²:00"]
)
def test_other_digits_are_refused_everywhere(app, typed):
    assert say(app, typed).error


def test_unsubscribe_and_search_page_numbers(app):
    say(app, "subscribe graph neural networks")
    say(app, "subscribe diffusion models")
    assert say(app, "unsubscribe ２").text == "Stopped following 'diffusion models'."
    assert say(app, "search graph page:２").text == say(app, "search graph page:2").text
    assert say(app, "search graph year:２０２６").text == say(app, "search graph year:2026").text


# The CLI's numeric options read numbers with the chat's parser (digest.text.numbers.whole_number).


def cli(capsys, *args: str) -> tuple[int, str, str]:
    from bot.cli.main import main

    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("papers", "list", "--offset", "-1"), "--offset"),
        (("papers", "list", "--offset", "9" * 40), "--offset"),
        (("papers", "list", "--limit", "0"), "--limit"),
        (("papers", "list", "-n", "99999999999999999999999"), "--limit"),
        (("papers", "list", "-n", "²"), "--limit"),
        (("search", "x", "--limit", "-3"), "--limit"),
        (("search", "x", "--limit", "5000"), "--limit"),
        (("search", "x", "--page", "-1"), "--page"),
        (("search", "x", "--page", "٢"), "--page"),
        (("search", "x", "--year", "-2026"), "--year"),
        (("search", "x", "--year", "20266"), "--year"),
        (("discord", "sync", "--guild", "-4"), "--guild"),
    ],
)
def test_cli_refuses_negative_and_absurd_numbers(env_isolated, capsys, args, option):
    """Repro: `digestbot papers list --offset -1` listed papers; an offset past SQLite's integers
    was a raw OverflowError. Breaks that turn this red: `parser=whole(...)` dropped from --offset
    (exit 0), from --limit of papers list (OverflowError line without the option's name), from
    --year (negative year searched), from --guild (reaches the token check instead)."""
    code, out, err = cli(capsys, *args)
    assert code == 2, (args, out, err)
    assert err.startswith(f"error: {option} must be a whole number from "), err
    assert len(err.strip().splitlines()) == 1 and not out


def test_cli_reads_full_width_digits_like_chat(env_isolated, capsys):
    """Chat took `size ２` but the CLI refused `--limit ２`. Breaks that turn this red: the CLI
    parser without `numeric_text` (full-width refused, exit 2); the --offset parser removed."""
    from digest import BUNDLED_PAPERS

    cli(capsys, "ingest", str(BUNDLED_PAPERS))
    code, full, err = cli(capsys, "papers", "list", "--limit", "２", "--offset", "１")
    assert code == 0, err
    _, ascii_, _ = cli(capsys, "papers", "list", "--limit", "2", "--offset", "1")
    _, first, _ = cli(capsys, "papers", "list", "--limit", "3")
    assert full == ascii_ and full.splitlines() == first.splitlines()[1:]
    code, out, err = cli(capsys, "search", "sparse autoencoders", "--json", "--limit", "１")
    assert code == 0 and len(json.loads(out)["results"]) == 1, err


def test_one_parser_for_chat_and_cli():
    """The same words in chat and on the command line; a 5000-digit number is refused, not a
    ValueError from int()'s digit limit. Break that turns this red: the length guard dropped."""
    from digest.errors import DigestError
    from digest.text.numbers import whole_number

    assert whole_number("１２", "size", 1, 25) == 12
    for bad in ("9" * 5000, "-1", "1.5", "", "26"):
        with pytest.raises(
            DigestError, match=r"^size must be a whole number from 1 to 25, (got|but no number)"
        ):
            whole_number(bad, "size", 1, 25)
