"""File ingest: the NeurIPS list, JSON Lines and CSV, and every kind of bad input."""

import json

import pytest

from digest import BUNDLED_PAPERS
from digest.errors import IngestError
from digest.ingest.parse import decode, parse_csv, parse_jsonl, parse_neurips_list
from digest.ingest.pipeline import detect_format, ingest


def test_bundled_neurips_list_has_19_papers_with_stable_derived_ids():
    parsed = parse_neurips_list(BUNDLED_PAPERS.read_text(encoding="utf-8"))
    assert len(parsed.records) == 19 and not parsed.problems
    again = parse_neurips_list(BUNDLED_PAPERS.read_text(encoding="utf-8"))
    assert [r.id for r in parsed.records] == [r.id for r in again.records]
    assert len({r.id for r in parsed.records}) == 19
    assert all(
        r.title_derived and r.title and r.venue == "NeurIPS 2026" and r.year == 2026
        for r in parsed.records
    )
    assert not any("论文列表" in r.abstract for r in parsed.records)  # the header is not a paper


def test_ingest_bundled_twice_adds_nothing_the_second_time(store):
    assert ingest(store, str(BUNDLED_PAPERS)).added == 19
    second = ingest(store, str(BUNDLED_PAPERS))
    assert (second.added, second.unchanged) == (0, 19)
    assert store.papers.count() == 19


def test_jsonl_keeps_ids_reports_bad_lines_and_duplicates():
    lines = [
        json.dumps(
            {
                "id": "A1",
                "title": "First paper",
                "abstract": "About graphs.",
                "keywords": ["x", "y"],
            }
        ),
        "{not json",
        json.dumps({"id": "A1", "title": "Dup", "abstract": "Again."}),
        json.dumps(["not", "an", "object"]),
        json.dumps(
            {
                "id": "B2",
                "title": "Second paper",
                "abstract": "About RL.",
                "authors": "Ann Lee, Bo Chen and Cy Dee",
            }
        ),
        json.dumps({"id": "C3"}),
    ]
    parsed = parse_jsonl("\n".join(lines))
    assert [r.id for r in parsed.records] == ["A1", "B2"]
    assert parsed.records[0].keywords == ("x", "y")
    assert parsed.records[1].authors == ("Ann Lee", "Bo Chen", "Cy Dee")
    by_line = {p.line: p.message for p in parsed.problems}
    assert set(by_line) == {2, 3, 4, 6}
    assert "invalid JSON" in by_line[2] and "duplicate id 'A1'" in by_line[3]


def test_csv_reads_columns_and_refuses_a_csv_without_abstract():
    parsed = parse_csv(
        'title,abstract,authors,url\nGraphs,"About, graphs",Ann Lee;Bo Chen,https://arxiv.org/abs/2401.00001v2\n'
    )
    (rec,) = parsed.records
    assert rec.abstract == "About, graphs" and rec.authors == ("Ann Lee", "Bo Chen")
    assert rec.links.abs == "https://arxiv.org/abs/2401.00001v2"
    with pytest.raises(IngestError, match="no 'abstract' column"):
        parse_csv("title,authors\nA,B\n")


def test_empty_binary_and_invalid_utf8_inputs():
    with pytest.raises(IngestError, match="empty"):
        decode(b"  \n\n", "f.txt")
    with pytest.raises(IngestError, match="binary"):
        decode(b"\x89PNG\r\n\x1a\n\x00\x00\x00", "f.jsonl")
    text, problems = decode(b'{"id": "x", "abstract": "caf\xe9"}\n', "f.jsonl")
    assert "café" in text and problems[0].line == 1 and problems[0].warning  # read as Latin-1
    assert "Latin-1" in problems[0].message


def test_ten_megabyte_abstract_is_stored_truncated(sqlite_store, tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_text(
        json.dumps({"id": "big", "title": "Big", "abstract": "token " * 2_000_000}) + "\n"
    )
    assert ingest(sqlite_store, str(path)).added == 1
    paper = sqlite_store.papers.get("big")
    assert 1000 < len(paper.abstract) <= 20_010 and len(paper.abstract_raw) <= 200_000


def test_sql_metacharacters_and_emoji_are_stored_verbatim(store, tmp_path):
    title = 'Robert\'); DROP TABLE papers;-- 🤖 "quotes" %s ?'
    path = tmp_path / "evil.jsonl"
    path.write_text(
        json.dumps({"id": "e'1;--", "title": title, "abstract": "🧪 emoji ' \" ; -- text"}) + "\n",
        encoding="utf-8",
    )
    ingest(store, str(path))
    paper = store.papers.get("e'1;--")
    assert paper.title == title and paper.abstract == "🧪 emoji ' \" ; -- text"
    assert store.papers.count() == 1


def test_missing_file_and_unknown_format_are_clear_errors(sqlite_store, tmp_path):
    with pytest.raises(IngestError, match="No such file"):
        ingest(sqlite_store, str(tmp_path / "nope.jsonl"))
    with pytest.raises(IngestError, match="Unknown format"):
        detect_format("x.jsonl", "yaml")
    bad = tmp_path / "only-bad.jsonl"
    bad.write_text("{oops\n")
    with pytest.raises(IngestError, match="no paper could be read"):
        ingest(sqlite_store, str(bad))
