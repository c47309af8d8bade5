"""Ingest edges an outside tester found: lone surrogates, stray NULs, silent cuts, fractional years."""

import gzip
import json
from dataclasses import astuple

import pytest

from bot.cli.main import main
from digest.errors import IngestError
from digest.ingest.feeds import parse_arxiv_feed, parse_openreview_notes
from digest.ingest.parse import decode, parse_csv, parse_jsonl, parse_neurips_list
from digest.ingest.pipeline import ingest

GOOD = '{"id":"ok1","title":"A fine title","abstract":"good words here"}\n'


def _storable(parsed) -> None:
    """Every text a record carries encodes as UTF-8 (what the database write needs)."""
    for rec in parsed.records:
        for value in json.dumps(astuple(rec), default=str, ensure_ascii=False):
            value.encode("utf-8")


def test_a_lone_surrogate_is_dropped_with_a_warning_and_the_rest_stored(env_isolated, capsys):
    """The tester's repro: one JSONL line with an escaped lone surrogate aborted the whole ingest
    at the database write (UnicodeEncodeError, exit 2, nothing stored). Now the half character is
    dropped with a `file:line: warning:` and both papers are stored.

    Breaks that turn this red: the surrogate drop in fields.plain removed (exit 2, nothing
    stored); its note removed (no warning line).
    """
    path = env_isolated / "s.jsonl"
    path.write_text(GOOD + '{"id":"s1","title":"lone \\ud800 x","abstract":"surrogate words"}\n')
    code = main(["ingest", str(path)])
    out, err = capsys.readouterr()
    assert code == 0 and "2 new" in out, (out, err)
    assert f"{path}:2: warning: 'title' held a lone surrogate" in err, err
    assert main(["papers", "show", "s1"]) == 0 and "lone x" in capsys.readouterr().out


def test_no_source_format_lets_a_lone_surrogate_through():
    """JSONL (every field), OpenReview JSON (links too) and arXiv Atom character references all
    yield records that encode as UTF-8, each with a warning; CSV and the seed list are decoded
    from bytes, where strict UTF-8 cannot produce one (bad bytes are read as Latin-1).

    Breaks that turn this red: safe_links not applied in make_record (the OpenReview pdf keeps
    it); _drop_surrogate_refs not called (feedparser raises UnicodeEncodeError); plain() not
    dropping (every assertion).
    """
    bad = "a\ud800b"
    row = {
        "id": "x" + bad,
        "title": bad,
        "abstract": bad + " words",
        "authors": [bad],
        "keywords": bad,
        "venue": bad,
        "url": "https://e.org/" + bad,
        "code": bad,
    }
    jsonl = parse_jsonl(json.dumps(row) + "\n")
    note = {
        "id": "n1",
        "forum": "n1",
        "content": {
            "title": {"value": bad},
            "abstract": {"value": bad},
            "pdf": {"value": "/pdf" + bad},
            "code": bad,
        },
    }
    openreview = parse_openreview_notes({"notes": [note]})
    atom = (
        b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><entry>'
        b"<id>http://arxiv.org/abs/2611.00001v1</id><title>Lone &#xD800; x</title>"
        b"<summary>words &#56320; here</summary></entry></feed>"
    )
    feed = parse_arxiv_feed(atom)
    text, _ = decode(b"title,abstract\nA \xed\xa0\x80,words here\n", "f.csv")
    for parsed in (jsonl, openreview, feed, parse_csv(text), parse_neurips_list("h\n\n" + text)):
        assert len(parsed.records) == 1, parsed.problems
        _storable(parsed)
    for parsed in (jsonl, openreview, feed):
        assert any("lone surrogate" in p.message and p.warning for p in parsed.problems)
    assert jsonl.records[0].title == "ab" and openreview.records[0].links.pdf.endswith("/pdfab")
    assert feed.records[0].title == "Lone x"


def test_chat_text_with_a_lone_surrogate_is_refused_and_nothing_stored(app):
    """Slack and Discord deliver JSON, which may carry `\\ud800`: typed text and typed options
    are refused with one short line, before anything is stored.

    Breaks that turn this red: the check in Commands._dispatch removed (the subscription write
    fails: "Something went wrong"); the check in Commands.invoke removed (the Discord path).
    """
    from bot.commands import Context
    from bot.commands.core import Args
    from digest.models import ChannelRef

    lab = ChannelRef("console", "lab")
    ctx = Context(ref=lab, user="ann", is_admin=True, dm=ChannelRef("console", "@ann"))
    for reply in (
        app.commands.handle("/papers subscribe lone \ud800 topic", ctx),
        app.commands.invoke("subscribe", ctx, Args.typed("lone \ud800 topic", kind="topic")),
    ):
        assert reply.error and "broken character" in reply.text, reply.text
    assert app.store.channels.get(lab) is None


def test_a_stray_nul_skips_its_line_but_real_binary_files_are_refused(env_isolated, capsys):
    """One raw NUL refused the whole JSONL file as binary. Now that line is a bad line and the
    rest is stored (exit 1); a PDF (whose first block may hold no NUL), a gzip file and a PNG
    are still refused as binary.

    Breaks that turn this red: decode back to `b"\\x00" in head` (the whole file refused);
    the signature check dropped (the NUL-free PDF is read as text).
    """
    path = env_isolated / "n.jsonl"
    path.write_bytes(
        (GOOD + '{"id":"n1","title":"nul \x00 x","abstract":"nul words"}\n').encode()
        + b'{"id":"ok2","title":"fine2","abstract":"good words there"}\n'
    )
    code = main(["ingest", str(path)])
    out, err = capsys.readouterr()
    assert code == 1 and "2 new" in out, (out, err)
    assert f"{path}:2: a NUL byte in the line" in err, err
    pdf = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n" * 20
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    for blob in (pdf, gzip.compress(GOOD.encode() * 50), png):
        with pytest.raises(IngestError, match="binary"):
            decode(blob, "f.jsonl")


def test_text_that_begins_like_a_signature_or_holds_a_few_nuls_is_text() -> None:
    """A paper list whose first abstract begins "GIF8K: a benchmark" or "BZh…", or a short file
    with a few stray NULs, was refused whole as binary (a review of the first fix). Real bzip2
    and GIF files still are.

    Breaks that turn this red: the short `b"GIF8"` / `b"BZh"` signatures back in `_MAGIC`; the
    control-byte floor back at 2 (three NULs in a short file -> binary). (`_BZIP2` is a second
    guard: compressed data is also binary by its control bytes, so dropping it stays green.)
    """
    import bz2

    for text in (
        b"GIF8K: a benchmark of eight thousand GIFs.\n",
        b"BZh is a toy language.\n",
        b'{"id":"a","abstract":"x \x00 y \x00 z \x00"}\n',
    ):
        assert decode(text, "f.txt")[0].startswith(text.decode()[:3])
    gif = b"GIF89a" + bytes([1, 0, 1, 0, 0x80, 0, 0]) + b"\xff" * 40
    for blob in (bz2.compress(GOOD.encode() * 50), gif):
        with pytest.raises(IngestError, match="binary"):
            decode(blob, "f.jsonl")


def test_long_fields_are_cut_with_a_warning(env_isolated, capsys):
    """A 100,000-character title and a 1 MB abstract were cut silently (to 500 and 20,000).
    Each cut is now a `file:line: warning: … cut to N characters` line; README names the limits.

    Breaks that turn this red: the title's note removed (cut() without notes.append); the
    abstract's note removed; the README sentence on limits deleted.
    """
    path = env_isolated / "l.jsonl"
    big = {"id": "long", "title": "t" * 100_000, "abstract": "word " * 200_000}
    path.write_text(json.dumps(big) + "\n" + GOOD)
    code = main(["ingest", str(path)])
    out, err = capsys.readouterr()
    assert code == 0 and "2 new" in out
    assert f"{path}:1: warning: title cut to 500 characters (it had 100,000)" in err, err
    assert f"{path}:1: warning: abstract cut to 20,000 characters (it had 1,000,000)" in err
    assert f"{path}:2:" not in err  # a record within the limits gets no warning
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "docs" / "ingest.md").read_text()
    assert "titles 500 characters, abstracts 20,000" in readme


@pytest.mark.parametrize(
    ("year", "stored"),
    [
        (2026.5, None),
        (2026.0, 2026),
        (2026, 2026),
        ("2026", 2026),
        ("12026", None),
        (True, None),
        ("2026.5", None),
        ("2026.05.01", 2026),
        ("2026-05-01", 2026),
    ],
)
def test_a_fractional_year_is_not_a_year(sqlite_store, tmp_path, year, stored):
    """`"year": 2026.5` was truncated to 2026 silently, while `true` or `-5` were refused with a
    warning; now it is refused the same way (2026.0 is 2026).

    A dotted date (2026.05.01) keeps its year: only a value that is a decimal number is read
    as one (a review of the first fix found the dotted date losing its year).

    Breaks that turn this red: `fields.year` without its decimal-number branch (2026.5 stored as
    2026, no warning); the `(?<!\\d)` lookbehind dropped from `_YEAR` (12026 -> 2026); the
    decimal test made a search instead of a full match (2026.05.01 -> no year).
    """
    parsed = parse_jsonl(json.dumps({"id": "y", "abstract": "words", "year": year}) + "\n")
    assert parsed.records[0].year == stored
    warned = [p.message for p in parsed.problems if "is not a year" in p.message]
    assert bool(warned) == (stored is None), parsed.problems
    path = tmp_path / "y.jsonl"
    path.write_text(json.dumps({"id": "y", "abstract": "words", "year": year}) + "\n")
    assert ingest(sqlite_store, str(path)).added == 1
    assert sqlite_store.papers.get("y").year == stored


def test_cli_subscribe_with_undecodable_bytes_is_one_error_line(env_isolated, capsys):
    """Bytes that are not UTF-8 on a command line reach Python as lone surrogates: `digestbot
    subscribe` failed at the database write (`error: UnicodeEncodeError …`). Now one short line.

    The same for a console channel name and for `cmd --user`.

    Breaks that turn this red: the has_surrogates check in topic_text.clean_topic removed;
    the surrogate range dropped from the console id pattern in cli_channels; the ctx.user
    check in Commands._dispatch removed ("Something went wrong on our side").
    """
    code = main(["subscribe", "console:lab", "bad \udcff topic"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: That text holds a broken character"), err
    assert main(["subscribe", "console:l\udcffab", "topic"]) == 2
    assert capsys.readouterr().err.startswith("error: Not a valid channel")
    assert main(["cmd", "console:lab", "/papers subscribe x", "--user", "u\udcff"]) == 2
    assert (
        capsys.readouterr().err
        == "error: --user holds bytes that are not UTF-8; retype the name.\n"
    )
    assert main(["channels"]) == 0 and capsys.readouterr().out.startswith("No channels")
