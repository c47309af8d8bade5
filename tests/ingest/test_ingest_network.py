"""arXiv and OpenReview ingest against a local server serving recorded payloads."""

import json
from pathlib import Path

import pytest

from digest.errors import IngestError
from digest.ingest.fetch import PoliteClient
from digest.ingest.pipeline import SourceConfig, ingest
from tests.fakes.http import FakeServer, Reply

FIXTURES = Path(__file__).parents[1] / "fixtures"
ATOM = (FIXTURES / "arxiv_atom.xml").read_bytes()
RSS = (FIXTURES / "arxiv_rss.xml").read_bytes()


def cfg(server: FakeServer) -> SourceConfig:
    return SourceConfig(
        arxiv_base_url=f"{server.url}/api/query",
        arxiv_rss_url=f"{server.url}/rss",
        openreview_base_url=server.url,
        min_interval=0.0,
    )


def note(i: int, title: str | None = None, abstract: str | None = None) -> dict:
    return {
        "id": f"OR{i}",
        "forum": f"OR{i}",
        "content": {
            "title": {"value": title or f"Paper number {i} on graph learning"},
            "abstract": {
                "value": abstract
                or f"We study graph learning problem {i} with message passing and more words."
            },
            "authors": {"value": ["Ann Lee", "Bo Chen"]},
            "keywords": {"value": ["graphs"]},
            "venue": {"value": "NeurIPS 2026 poster"},
            "venueid": {"value": "NeurIPS.cc/2026/Conference"},
            "pdf": {"value": f"/pdf/abc{i}.pdf"},
        },
    }


def test_arxiv_atom_versions_collapse_and_reingest_adds_nothing(sqlite_store):
    with FakeServer() as server:
        server.routes["/api/query"] = [Reply(200, ATOM, {"Content-Type": "application/atom+xml"})]
        first = ingest(sqlite_store, "arxiv:cat:cs.LG", cfg=cfg(server))
        second = ingest(sqlite_store, "arxiv:cat:cs.LG", cfg=cfg(server))
    assert (first.added, second.added) == (2, 0)
    paper = sqlite_store.papers.get("2611.01234")
    assert paper.title == "Sparse Autoencoders Find Curved Features in Language Models"
    assert paper.authors == ("Ada Lovelace", "Alan Turing")
    assert paper.links.abs == "https://arxiv.org/abs/2611.01234"
    assert "curved features" in paper.abstract and "\\emph" not in paper.abstract
    assert server.requests[0][1]["search_query"] == ["cat:cs.LG"]


def test_arxiv_rss_strips_the_announce_prefix(sqlite_store):
    with FakeServer() as server:
        server.routes["/rss/cs.LG"] = [Reply(200, RSS)]
        report = ingest(sqlite_store, "arxiv-rss:cs.LG", cfg=cfg(server))
    assert report.added == 1
    paper = sqlite_store.papers.get("2611.09999")
    assert paper.abstract.startswith("We shorten the grokking delay")


def test_rate_limit_and_server_errors_are_retried_honouring_retry_after(sqlite_store):
    waits: list[float] = []
    with FakeServer() as server:
        server.routes["/api/query"] = [
            Reply(429, b"slow down", {"Retry-After": "7"}),
            Reply(503, b"busy"),
            Reply(200, ATOM),
        ]
        client = PoliteClient(min_interval=0.0, sleep=waits.append)
        assert client.get(f"{server.url}/api/query").status_code == 200
    assert waits[0] == 7.0 and len(waits) == 2


def test_persistent_failure_is_one_clear_error(sqlite_store):
    with FakeServer() as server:
        server.routes["/api/query"] = [Reply(503, b"down")]
        client = PoliteClient(min_interval=0.0, retries=2, sleep=lambda s: None)
        with pytest.raises(IngestError, match="kept failing|HTTP 503"):
            client.get(f"{server.url}/api/query")


def test_html_instead_of_a_feed_is_refused_and_nothing_is_lost(sqlite_store):
    with FakeServer() as server:
        server.routes["/api/query"] = [Reply(200, ATOM)]
        ingest(sqlite_store, "arxiv:cat:cs.LG", cfg=cfg(server))
        server.routes["/api/query"] = [
            Reply(200, b"<!DOCTYPE html><html><body>Maintenance</body></html>")
        ]
        with pytest.raises(IngestError, match="HTML"):
            ingest(sqlite_store, "arxiv:cat:cs.LG", cfg=cfg(server))
        server.routes["/api/query"] = [Reply(200, b"<feed><entry><title>broken")]
        with pytest.raises(IngestError, match="not valid XML"):
            ingest(sqlite_store, "arxiv:cat:cs.LG", cfg=cfg(server))
    assert sqlite_store.papers.count() == 2


def test_openreview_paginates_and_merges_with_arxiv_by_title(sqlite_store):
    notes = [note(i) for i in range(5)] + [
        note(  # the camera-ready abstract: the preprint's, lightly revised
            99,
            "Sparse Autoencoders Find Curved Features in Language Models",
            "We train sparse autoencoders (SAEs) on residual-stream activations and show that "
            "k-sparse codes miss curved features, which we recover with a manifold-aware dictionary.",
        )
    ]

    def page(query):
        offset, limit = int(query["offset"][0]), int(query["limit"][0])
        assert query["content.venueid"] == ["NeurIPS.cc/2026/Conference"]
        return Reply(
            200, json.dumps({"notes": notes[offset : offset + limit], "count": len(notes)}).encode()
        )

    with FakeServer() as server:
        server.routes["/api/query"] = [Reply(200, ATOM)]
        ingest(sqlite_store, "arxiv:cat:cs.LG", cfg=cfg(server))
        server.routes["/notes"] = page
        from digest.ingest import fetch

        pages = list(
            fetch.openreview_pages(
                PoliteClient(min_interval=0), server.url, "NeurIPS.cc/2026/Conference", 4
            )
        )
        assert [len(p["notes"]) for p in pages] == [4, 2]
        report = ingest(sqlite_store, "openreview:NeurIPS.cc/2026/Conference", cfg=cfg(server))
    assert (report.added, report.merged) == (5, 1)
    merged = sqlite_store.papers.get("2611.01234")
    assert merged.links.forum.endswith("forum?id=OR99") and merged.links.abs
    assert sqlite_store.papers.get("OR3").links.pdf == "https://openreview.net/pdf/abc3.pdf"


def test_openreview_non_json_answer_is_a_clear_error(sqlite_store):
    with FakeServer() as server:
        server.routes["/notes"] = [Reply(200, b"<html>oops</html>")]
        with pytest.raises(IngestError, match="not JSON"):
            ingest(sqlite_store, "openreview:X/2026", cfg=cfg(server))


def test_unreachable_host_is_a_clear_error(sqlite_store):
    bad = SourceConfig(arxiv_base_url="http://127.0.0.1:1/api", min_interval=0)
    client_error = pytest.raises(IngestError, match="Cannot reach")
    with client_error:
        from digest.ingest import fetch

        fetch.PoliteClient(min_interval=0, retries=0).get(bad.arxiv_base_url)
