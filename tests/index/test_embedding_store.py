"""Stored embeddings follow the papers' text, and a bot ranks lexically until they exist.

A fake encoder (a vector drawn from a hash of the text) stands in for the model, so these run
without the semantic extra. Breaks tried, each turns a test here red:
- `EmbeddingStore.stale` ignoring the text hash: a re-ingested paper keeps its old vector;
- `PaperService.ingest` not passing the updated ids to `embed_new`: the same;
- `PaperRepo.upsert` not reporting a derived title replaced by a real one: the same;
- chunks named so that sorted names are not oldest first: after a restart the old vector wins;
- `_refresh` reading the folder only once: another process's vectors are never seen;
- legacy chunks (no hashes) trusted even when their paper is reported changed: old vector kept;
- `fuse` blending papers that have no vector yet: they sink to (1 - w) of their lexical score;
- `_with_vectors` not starting the background run, or blocking on it: no vectors / slow search;
- `embed_new` embedding on the caller's thread in a running bot: a scheduled ingest waits for
  the model; `embed_in_background` dropping work queued while a run is busy: a re-ingested
  paper keeps its old vector.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time

import numpy as np
import pytest

import digest.index.lifecycle as index_store
from digest.index.embeddings import paper_text
from digest.index.vectors import EmbeddingStore
from digest.papers.service import PaperService
from digest.rank.index import DocInput, build_index
from digest.rank.ranker import Ranker
from tests.support.corpus import synthetic_records


class HashEncoder:
    """A unit vector per text, drawn from its hash: equal texts, equal vectors. Records calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.gate: threading.Event | None = None

    def encode(self, texts: list[str], **kw) -> np.ndarray:
        if self.gate is not None:
            self.gate.wait(10)
        self.calls += texts
        return np.stack([vec(t) for t in texts])


def vec(text: str) -> np.ndarray:
    seed = int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)
    v = np.random.default_rng(seed).normal(size=384).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def encoder(monkeypatch):
    fake = HashEncoder()
    monkeypatch.setattr(index_store, "load_encoder", lambda *a, **k: fake)
    return fake


def _jsonl(path, papers):
    path.write_text("\n".join(json.dumps(p) for p in papers), encoding="utf-8")
    return str(path)


PAPERS = [
    {"id": f"p{i}", "title": f"Paper {i} on graphs", "abstract": f"We study graph topic {i}."}
    for i in range(5)
]


def test_a_reingest_with_new_text_embeds_that_paper_again(sqlite_store, tmp_path, encoder):
    service = PaperService(sqlite_store, tmp_path / "index")
    service.ingest(_jsonl(tmp_path / "a.jsonl", PAPERS))
    assert len(encoder.calls) == 5
    changed = [dict(p) for p in PAPERS]
    changed[2]["abstract"] = "We study sparse autoencoders instead, with new results."
    encoder.calls.clear()
    report = service.ingest(_jsonl(tmp_path / "b.jsonl", changed))
    assert report.updated == 1
    new_text = paper_text("Paper 2 on graphs", changed[2]["abstract"])
    assert encoder.calls == [new_text]  # that paper alone, from its new text
    index = service.ranker().index
    assert np.allclose(index.dense[index.pos["p2"]], vec(new_text))
    restarted = PaperService(sqlite_store, tmp_path / "index")  # the newest vector wins on disk
    assert restarted.indexes.embed_new() == 0
    index = restarted.ranker().index
    assert np.allclose(index.dense[index.pos["p2"]], vec(new_text))


def test_a_real_title_replacing_a_derived_one_is_new_text(sqlite_store, tmp_path, encoder):
    service = PaperService(sqlite_store, tmp_path / "index")
    untitled = [{"id": "q1", "abstract": "We propose a method for graph matching at scale."}]
    service.ingest(_jsonl(tmp_path / "a.jsonl", untitled))
    encoder.calls.clear()
    service.ingest(_jsonl(tmp_path / "b.jsonl", [{**untitled[0], "title": "GraphMatch"}]))
    assert encoder.calls == [paper_text("GraphMatch", untitled[0]["abstract"])]


def test_legacy_chunks_are_kept_until_their_paper_changes(sqlite_store, tmp_path, encoder):
    service = PaperService(sqlite_store, tmp_path / "index")
    sqlite_store.papers.upsert([])  # the store exists
    service.ingest(_jsonl(tmp_path / "a.jsonl", PAPERS))
    folder = service.indexes.embeddings.folder
    for f in folder.glob("chunk-*.npz"):  # as written before hashes were stored
        with np.load(f) as z:
            ids, vectors = z["ids"], z["vectors"]
        f.unlink()
        np.savez(folder / "chunk-000000-1.npz", ids=ids, vectors=vectors)
    encoder.calls.clear()
    restarted = PaperService(sqlite_store, tmp_path / "index")
    assert restarted.indexes.embed_new() == 0 and not encoder.calls
    assert restarted.indexes.embed_new(["p1"]) == 1  # reported changed: embedded again


def test_vectors_another_process_saved_are_seen(tmp_path):
    from digest.models import Paper

    a, b = EmbeddingStore(tmp_path, HashEncoder()), EmbeddingStore(tmp_path, HashEncoder())
    assert b.vectors() == {}
    paper = Paper(id="x", source="jsonl", title="T", abstract_raw="A", abstract="A")
    a.embed([paper])
    time.sleep(0.02)  # a later write lands in a later folder mtime
    assert "x" in b.vectors() and b.stale([paper]) == []


def _half_embedded():
    recs = synthetic_records(per_topic=6)
    index = build_index([DocInput(r.id, r.title, r.abstract) for r in recs])
    rng = np.random.default_rng(3)
    vecs = rng.normal(size=(len(recs), 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    has = np.array([i % 2 == 0 for i in range(len(recs))])
    vecs[~has] = 0
    index.dense, index.has_dense = vecs, has
    return index, has


def test_papers_without_a_vector_yet_keep_their_lexical_score():
    index, has = _half_embedded()
    query = "graph neural networks with message passing for node classification"
    lexical = {h.paper_id: h.score for h in Ranker(index).search(query, per_page=100).hits}
    fused = Ranker(index, encoder=HashEncoder()).search(query, per_page=100)
    assert Ranker(index, encoder=HashEncoder()).state(query).dense.weight > 0
    bare = [h for h in fused.hits if not has[index.pos[h.paper_id]]]
    assert bare and all(h.score == pytest.approx(lexical[h.paper_id], abs=1e-4) for h in bare)
    assert not fused.message  # nothing is said about vectors still missing


def test_a_running_bot_embeds_in_background_and_ranks_lexically_meanwhile(
    sqlite_store, tmp_path, encoder
):
    sqlite_store.papers.upsert(synthetic_records(per_topic=3))
    service = PaperService(sqlite_store, tmp_path / "index")
    service.indexes.background = True
    encoder.gate = threading.Event()  # the model is slow: nothing is embedded yet
    started = time.monotonic()
    result = service.search("graph neural networks")
    assert time.monotonic() - started < 5 and result.result.hits and not result.result.message
    assert service.ranker().index.dense is None  # lexical until vectors exist
    encoder.gate.set()
    service.indexes.embeddings.wait(30)
    index = service.ranker().index
    assert index.has_dense is not None and index.has_dense.all()


def test_a_running_bot_ingests_without_waiting_and_embeds_each_paper_once(
    sqlite_store, tmp_path, encoder
):
    service = PaperService(sqlite_store, tmp_path / "index")
    service.indexes.background = True
    encoder.gate = threading.Event()
    started = time.monotonic()
    service.ingest(_jsonl(tmp_path / "a.jsonl", PAPERS))  # a scheduled ingest
    changed = [dict(p) for p in PAPERS]
    changed[0]["abstract"] = "We study message passing on molecules, with new results."
    service.ingest(_jsonl(tmp_path / "b.jsonl", changed))  # queued behind the first run
    assert service.search("graph").result.hits  # searches keep working meanwhile
    assert time.monotonic() - started < 5  # the model did not hold the ingests up
    encoder.gate.set()
    for _ in range(100):
        service.indexes.embeddings.wait(5)
        if not service.indexes.embeddings.busy:
            break
    texts = [paper_text(p["title"], p["abstract"]) for p in PAPERS + changed[:1]]
    # Each text at most once (no run twice); every current text embedded. The first run may load
    # after the second ingest (thread start under load), and then p0's old text is never needed.
    assert len(encoder.calls) == len(set(encoder.calls)), encoder.calls
    assert set(texts[1:]) <= set(encoder.calls) <= set(texts), encoder.calls
    index = service.ranker().index
    assert np.allclose(index.dense[index.pos["p0"]], vec(texts[-1]))
