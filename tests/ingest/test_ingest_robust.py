"""Ingest keeps good lines, reports bad ones with line numbers, and never half-aborts.

Deliberate breaks that turn these red: `_plain` not refusing objects (the url-object line
crashes the upsert); NUL characters kept (PostgreSQL refuses the batch); `_update` removed (the
re-sent id stays "already stored" with its old text); ConnectError retried with backoff (the
offline source takes ~35 s); the progress bar enabled on a pipe.
"""

import json
import os
import pty
import subprocess
import time

import pytest

from digest.errors import IngestError
from digest.ingest.parse import parse_csv, parse_jsonl
from digest.ingest.pipeline import SourceConfig, detect_format, ingest
from tests.support.cli_proc import ENTRY, clean_env, digestbot, one_error

WORDS = [
    "graphs",
    "sheaves",
    "kernels",
    "tokens",
    "agents",
    "proofs",
    "lattices",
    "spectra",
    "rewards",
    "priors",
]


def _mixed_file(path, n=1500):
    lines = []
    for i in range(n):
        words = " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7, 11))
        row = {"id": f"p{i}", "title": f"Paper {i} on {words}", "abstract": f"We study {words}."}
        if i == 700:
            row["url"] = {"href": "https://example.org"}  # an object where text belongs
        if i == 702:
            row["title"] = "With a NUL\x00 inside"
        if i == 703:
            del row["abstract"]
        lines.append("{not json" if i == 701 else json.dumps(row))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_bad_lines_mid_file_are_reported_and_the_rest_stored(tmp_path):
    proc = digestbot(tmp_path, "ingest", str(_mixed_file(tmp_path / "mixed.jsonl")))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "1498 new" in proc.stdout and "2 skipped" in proc.stdout
    assert "mixed.jsonl:701: skipped: 'url' must be text" in proc.stderr
    assert "mixed.jsonl:702: invalid JSON" in proc.stderr
    assert "mixed.jsonl:704: warning: no abstract" in proc.stderr
    listed = digestbot(tmp_path, "papers", "list", "--limit", "2000").stdout
    assert len(listed.strip().splitlines()) == 1498
    assert "ingesting" not in proc.stderr and "━" not in proc.stderr  # no progress bar on a pipe


def test_nul_characters_never_reach_the_database(store):
    parsed = parse_jsonl(json.dumps({"id": "n\x00ul", "title": "A\x00B", "abstract": "x\x00y z"}))
    store.papers.upsert(parsed.records)
    paper = store.papers.get("nul")
    assert paper.title == "AB" and "\x00" not in paper.abstract_raw


def test_a_resent_id_with_new_text_is_updated(store, tmp_path):
    first = tmp_path / "a.jsonl"
    first.write_text(json.dumps({"id": "x1", "title": "Old", "abstract": "Old text on graphs."}))
    assert ingest(store, str(first)).added == 1
    first.write_text(json.dumps({"id": "x1", "title": "New", "abstract": "New text on sheaves."}))
    report = ingest(store, str(first))
    assert report.updated == 1 and report.unchanged == 0
    assert store.papers.get("x1").abstract == "New text on sheaves." and store.papers.count() == 1


def test_csv_with_an_unclosed_quote_keeps_the_rows_before_it():
    parsed = parse_csv('id,title,abstract\n1,a,"fine"\n2,b,"unclosed\n3,c,more\n')
    assert [r.id for r in parsed.records] == ["1"]
    assert parsed.problems[0].line == 3 and "unclosed quote" in parsed.problems[0].message


def test_offline_source_fails_fast_saying_what_was_tried(sqlite_store):
    cfg = SourceConfig(arxiv_base_url="http://127.0.0.1:9/api/query", min_interval=0)
    started = time.monotonic()
    with pytest.raises(
        IngestError, match=r"Cannot reach http://127\.0\.0\.1:9/api/query\?search_query="
    ):
        ingest(sqlite_store, "arxiv:cat:cs.LG", cfg=cfg)
    assert time.monotonic() - started < 5


def test_unknown_prefix_lists_the_known_ones(tmp_path):
    line = one_error(digestbot(tmp_path, "ingest", "foo:bar"))
    assert "arxiv:QUERY, arxiv-rss:CATEGORY, openreview:VENUE_ID" in line


def test_progress_bar_shows_on_a_terminal(tmp_path):
    src = _mixed_file(tmp_path / "big.jsonl", n=3000)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [str(ENTRY), "ingest", str(src)],
        cwd=tmp_path,
        env=clean_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=120)
    os.close(master)
    assert b"ingesting" in seen or b"fitting the search index" in seen


def test_numbers_where_text_belongs_are_bad_lines_and_bad_years_are_said():
    """Repro: `"abstract": 123` was stored as a paper titled "123"; `"year": "abc"` vanished
    silently. Breaks seen red: `_plain` turning numbers into text again; `_year_note` unused."""
    rows = [
        {"id": "a1", "abstract": 123},
        {"id": "a2", "title": 42, "abstract": "We study graphs."},
        {"id": "a3", "title": "Real", "abstract": "We study things.", "year": "abc"},
        {"id": 7, "title": "Numeric id", "abstract": "An abstract here.", "year": 2024},
    ]
    parsed = parse_jsonl("\n".join(json.dumps(r) for r in rows))
    problems = {p.line: (p.message, p.warning) for p in parsed.problems}
    assert problems[1] == ("skipped: 'abstract' must be text, got a number", False)
    assert problems[2] == ("skipped: 'title' must be text, got a number", False)
    assert problems[3][1] and "'year' 'abc' is not a year" in problems[3][0]
    assert 4 not in problems
    assert {r.id: r.year for r in parsed.records} == {"a3": None, "7": 2024}


def test_authors_and_keywords_must_be_text_or_lists_of_text():
    """Repro: `"authors": [1, 2]` was stored as authors "1, 2" and `"keywords": 5` as "5".
    Break seen red: `_split_list` turning list items (or the whole value) into text with str()."""
    rows = [
        {"id": "b1", "title": "T", "abstract": "We study graphs.", "authors": [1, 2]},
        {"id": "b2", "title": "T", "abstract": "We study graphs.", "keywords": 5},
        {
            "id": "b3",
            "title": "T",
            "abstract": "We study graphs.",
            "authors": ["Ada", "Alan"],
            "keywords": "graphs; trees",
        },
    ]
    parsed = parse_jsonl("\n".join(json.dumps(r) for r in rows))
    problems = {p.line: p.message for p in parsed.problems}
    assert problems[1] == "skipped: 'authors' must be text, got a number"
    assert problems[2] == "skipped: 'keywords' must be text, got a number"
    [ok] = parsed.records
    assert ok.authors == ("Ada", "Alan") and ok.keywords == ("graphs", "trees")


@pytest.mark.parametrize(
    ("source", "example"),
    [
        ("arxiv:", "arxiv:cat:cs.LG"),
        ("arxiv-rss:", "arxiv-rss:cs.LG"),
        ("openreview: ", "openreview:NeurIPS.cc/2026/Conference"),
    ],
)
def test_an_empty_source_query_shows_its_own_example(source, example):
    """Each prefix's error gives an example of that prefix (`arxiv-rss:` said "e.g.
    arxiv:cat:cs.LG"). Breaks that turn this red: one example string for every prefix."""
    with pytest.raises(IngestError) as err:
        detect_format(source)
    assert f"(e.g. {example})" in str(err.value), err.value


def test_a_file_that_is_not_csv_is_not_echoed_as_its_columns(sqlite_store, tmp_path):
    """JSONL read with --format csv: the reply says it is not CSV with a header, and never lists
    the user's first record, lowercased, as "columns" (the reviewer's report); a real header
    without an abstract column is named as written. Breaks that turn this red: _csv_header
    accepting any first line as column names; a csv.Error on the first line escaping as
    "Error: ',' expected after '\"'"; names lowercased in the message."""
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text(
        '{"id":"x1","title":"Attention Is All You Need","abstract":"Transformers."}\n'
        '{"abstract": "Second", "title": "Graph Kernels"}\n'
    )
    with pytest.raises(IngestError) as err:
        ingest(sqlite_store, str(jsonl), "csv")
    text = str(err.value)
    assert "does not look like CSV with a header row" in text and str(jsonl) in text, text
    assert "attention" not in text.lower() and "columns:" not in text, text
    second = '{"abstract": "Second", "title": "Graph Kernels"}\n'  # no stray quote mid-field
    with pytest.raises(IngestError, match="does not look like CSV with a header row"):
        parse_csv(second)
    with pytest.raises(IngestError, match=r"no 'abstract' column .*names Title, Authors\.$"):
        parse_csv("Title,Authors\nA,B\n")
