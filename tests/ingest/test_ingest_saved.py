"""Saved arXiv feeds and OpenReview answers ingested from files, with or without --format."""

import json
import shutil
from pathlib import Path

import pytest

from digest.errors import IngestError
from digest.ingest.pipeline import SourceConfig, detect_format, ingest

FIXTURES = Path(__file__).parents[1] / "fixtures"
#: Every network source points at a closed port: reaching for it is "Cannot reach", not a pass.
OFFLINE = SourceConfig(
    arxiv_base_url="http://127.0.0.1:9/api/query",
    arxiv_rss_url="http://127.0.0.1:9/rss",
    openreview_base_url="http://127.0.0.1:9",
    min_interval=0.0,
)
NOTES = {
    "notes": [
        {
            "id": "ORfile1",
            "forum": "ORfile1",
            "content": {
                "title": {"value": "Saved Answers Are Papers Too"},
                "abstract": {"value": "We read an OpenReview API answer saved to a file."},
                "venue": {"value": "ICLR 2027 poster"},
            },
        }
    ]
}


@pytest.mark.parametrize("fmt", ["arxiv", "auto"])
def test_a_saved_atom_feed_is_read_from_the_file(sqlite_store, tmp_path, fmt):
    """`ingest feed.xml --format arxiv` (and without --format) parses the file with the fetcher's
    parser. Breaks that turn this red: _names_a_file returning False (the path went to arXiv as a
    query: "Cannot reach ...search_query=tests%2F..."); no sniffing in detect_format ("Cannot
    tell the format"); _parse_file without the feed branch."""
    report = ingest(sqlite_store, str(FIXTURES / "arxiv_atom.xml"), fmt, cfg=OFFLINE)
    assert (report.added, report.parsed) == (2, 3)
    paper = sqlite_store.papers.get("2611.01234")
    assert paper.title == "Sparse Autoencoders Find Curved Features in Language Models"


@pytest.mark.parametrize(("name", "fmt"), [("feed.rss", "arxiv-rss"), ("feed.xml", "auto")])
def test_a_saved_rss_feed_is_read_from_the_file(sqlite_store, tmp_path, name, fmt):
    """Breaks that turn this red: as above, for `--format arxiv-rss` and a sniffed .rss/.xml."""
    path = tmp_path / name
    shutil.copy(FIXTURES / "arxiv_rss.xml", path)
    assert detect_format(str(path))[0] == "arxiv-rss"
    assert ingest(sqlite_store, str(path), fmt, cfg=OFFLINE).added == 1
    assert sqlite_store.papers.get("2611.09999").abstract.startswith("We shorten the grokking")


@pytest.mark.parametrize("fmt", ["openreview", "auto"])
def test_a_saved_openreview_answer_is_read_from_the_file(sqlite_store, tmp_path, fmt):
    """Breaks that turn this red: _sniff not seeing {"notes": …} (read as one JSONL line: no
    abstract column, a bad line); the openreview branch of _parse_file removed."""
    path = tmp_path / "notes.json"
    path.write_text(json.dumps(NOTES, indent=2))
    assert ingest(sqlite_store, str(path), fmt, cfg=OFFLINE).added == 1
    assert sqlite_store.papers.get("ORfile1").links.forum.endswith("forum?id=ORfile1")


def test_json_lines_in_a_json_file_stay_json_lines(tmp_path):
    """A .json file of papers is still JSONL; only an OpenReview answer is sniffed as one."""
    path = tmp_path / "papers.json"
    path.write_text(json.dumps({"id": "a", "title": "T", "abstract": "About notes."}) + "\n")
    assert detect_format(str(path))[0] == "jsonl"


def test_bad_saved_files_are_one_clear_line_naming_the_file(sqlite_store, tmp_path):
    """A missing feed file is "No such file" (not a network query); a broken one names the file."""
    with pytest.raises(IngestError, match="No such file: .*gone.xml"):
        ingest(sqlite_store, str(tmp_path / "gone.xml"), "arxiv", cfg=OFFLINE)
    broken = tmp_path / "broken.xml"
    broken.write_text("<feed><entry><title>cut off")
    with pytest.raises(IngestError, match="broken.xml is not valid XML"):
        ingest(sqlite_store, str(broken), cfg=OFFLINE)
    page = tmp_path / "page.xml"
    page.write_text("<!DOCTYPE html><html><body>Sign in</body></html>")
    with pytest.raises(IngestError, match="page.xml is an HTML page"):
        ingest(sqlite_store, str(page), "arxiv", cfg=OFFLINE)
    bare = tmp_path / "bare.json"
    bare.write_text('{"count": 0}')
    with pytest.raises(IngestError, match="bare.json holds no OpenReview 'notes' list"):
        ingest(sqlite_store, str(bare), cfg=OFFLINE)
