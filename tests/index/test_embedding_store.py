"""Embeddings live in the database: each paper embedded once, by whichever process claims it.

A stand-in encoder (a vector drawn from a hash of the text) replaces the model, so these run
without the semantic extra. Breaks tried, each turns a test here red:
- `PaperRepo.upsert` not dropping the vectors of a paper whose text changed: it keeps the old one;
- `PaperRepo.upsert` not reporting a derived title replaced by a real one: the same;
- `EmbeddingRepo.claim` ignoring live claims (no `held` condition): two engines embed the same
  papers (counted twice);
- `EmbeddingRepo.store` not fenced by the claim's token: a worker whose lease was taken over
  stores its stale result over the new owner's;
- `EmbeddingRepo.store` not checking the text hash: a vector of the old text is stored for a
  paper re-ingested while it was being embedded;
- `EmbeddingStore.vectors` reading only once (not by sequence): another process's vectors are
  never seen;
- `fuse` blending papers that have no vector yet: they sink to (1 - w) of their lexical score;
- `embed_new` embedding in a running bot's process (``background``): the bot's encoder is called.
"""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

import digest.index.lifecycle as index_store
from digest.index.embeddings import paper_text
from digest.index.vectors import EmbeddingStore, hash_text, pack, unpack
from digest.ingest.parse import make_record
from digest.papers.service import PaperService
from digest.rank.index import DocInput, build_index
from digest.rank.ranker import Ranker
from digest.store import Store
from tests.fakes.encoders import HashEncoder, vec
from tests.support.corpus import synthetic_records


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
    assert np.allclose(index.dense[index.pos["p2"]], vec(new_text), atol=2e-3)
    restarted = PaperService(sqlite_store, tmp_path / "index")  # the database has the newest
    assert restarted.indexes.embed_new() == 0
    index = restarted.ranker().index
    assert np.allclose(index.dense[index.pos["p2"]], vec(new_text), atol=2e-3)


def test_a_real_title_replacing_a_derived_one_is_new_text(sqlite_store, tmp_path, encoder):
    service = PaperService(sqlite_store, tmp_path / "index")
    untitled = [{"id": "q1", "abstract": "We propose a method for graph matching at scale."}]
    service.ingest(_jsonl(tmp_path / "a.jsonl", untitled))
    encoder.calls.clear()
    service.ingest(_jsonl(tmp_path / "b.jsonl", [{**untitled[0], "title": "GraphMatch"}]))
    assert encoder.calls == [paper_text("GraphMatch", untitled[0]["abstract"])]


def test_float16_storage_moves_a_cosine_by_at_most_1e_3():
    """The stored form's loss, measured: 2,000 random unit vectors against 50 queries."""
    rng = np.random.default_rng(5)
    papers = rng.normal(size=(2000, 384)).astype(np.float32)
    papers /= np.linalg.norm(papers, axis=1, keepdims=True)
    queries = rng.normal(size=(50, 384)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    stored = np.stack([unpack(pack(v)) for v in papers])
    err = np.abs(papers @ queries.T - stored @ queries.T).max()
    assert err < 1e-3 and len(pack(papers[0])) == 768


def test_vectors_another_process_stored_are_seen(store):
    store.papers.upsert([make_record(source="jsonl", id="x", title="T", abstract="A")])
    other = Store.open(store.engine.url.render_as_string(hide_password=False))
    a = EmbeddingStore(store.embeddings, store.papers, HashEncoder(), "a")
    b = EmbeddingStore(other.embeddings, other.papers, HashEncoder(), "b")
    assert b.vectors() == {}
    assert a.embed_pending() == 1
    assert "x" in b.vectors() and b.missing(["x"]) == [] and b.embed_pending() == 0
    other.close()


def test_two_engines_embedding_together_embed_each_paper_once(store):
    """Two workers (separate engines, as two processes have) drain one backlog side by side."""
    store.papers.upsert(synthetic_records(per_topic=20))
    total = store.papers.count()
    other = Store.open(store.engine.url.render_as_string(hide_password=False))
    encoders = [HashEncoder(), HashEncoder()]
    workers = [
        EmbeddingStore(s.embeddings, s.papers, e, name)
        for s, e, name in ((store, encoders[0], "a"), (other, encoders[1], "b"))
    ]
    for e in encoders:  # a slow model: both are inside a chunk at the same time
        e.gate = threading.Event()
    threads = [threading.Thread(target=w.embed_pending) for w in workers]
    for t in threads:
        t.start()
    time.sleep(0.3)
    for e in encoders:
        e.gate.set()
    for t in threads:
        t.join(60)
    calls = encoders[0].calls + encoders[1].calls
    assert len(calls) == len(set(calls)) == store.papers.count()
    assert encoders[0].calls and encoders[1].calls  # the work was shared
    progress = store.embeddings.progress("stand-in")
    assert progress.embedded == progress.papers == total and progress.claimed == 0
    other.close()


def test_a_lapsed_claim_is_taken_over_and_its_old_owner_stores_nothing(store):
    store.papers.upsert([make_record(source="jsonl", id="x", title="T", abstract="A")])
    repo = store.embeddings
    old = repo.claim("m", "slow", 10, lease_s=-1)  # a lease already lapsed
    assert old is not None and repo.claim("m", "other", 10, 60) is not None  # taken over
    assert repo.store(old, {"x": (hash_text("T", "A"), pack(vec("old")))}, hash_text) == 0
    assert repo.since("m", 0) == []


def test_a_paper_reingested_while_it_was_embedded_gets_no_stale_vector(store):
    store.papers.upsert([make_record(source="jsonl", id="x", title="T", abstract="Old text.")])
    repo = store.embeddings
    claim = repo.claim("m", "w", 10, 60)
    store.papers.upsert([make_record(source="jsonl", id="x", title="T", abstract="New text.")])
    assert repo.store(claim, {"x": (hash_text("T", "Old text."), pack(vec("x")))}, hash_text) == 0
    assert repo.claim("m", "w", 10, 60).paper_ids == ("x",)  # embedded again, from the new text


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


def test_a_running_bot_embeds_nothing_and_ranks_with_what_others_stored(
    sqlite_store, tmp_path, encoder
):
    """The bot's own process never embeds a paper: an ingest there stores the papers and
    returns; what another process (the embedding worker) stores is attached at the next look."""
    service = PaperService(sqlite_store, tmp_path / "index", embeds=False)  # as a running bot's
    started = time.monotonic()
    service.ingest(_jsonl(tmp_path / "a.jsonl", PAPERS))  # a scheduled ingest
    assert service.search("graph").result.hits and time.monotonic() - started < 5
    assert service.ranker().index.dense is None  # lexical until vectors exist
    assert not [c for c in encoder.calls if c.startswith("Paper ")]  # no paper text embedded
    other = Store.open(sqlite_store.engine.url.render_as_string(hide_password=False))
    worker = EmbeddingStore(other.embeddings, other.papers, HashEncoder(), "worker")
    assert worker.embed_pending() == 5
    index = service.ranker().index
    assert index.has_dense is not None and index.has_dense.all()
    assert not [c for c in encoder.calls if c.startswith("Paper ")]
    other.close()


def test_query_vectors_are_cached(sqlite_store, tmp_path, encoder):
    """Breaks that turn this red: the ranker given the bare encoder (every new ranker, made for
    every new index, encodes the same query again)."""
    sqlite_store.papers.upsert(synthetic_records(per_topic=3))
    service = PaperService(sqlite_store, tmp_path / "index")
    service.indexes.embed_new()
    query = "graph neural networks with message passing for node classification"
    service.search(query)
    sqlite_store.papers.upsert(synthetic_records(per_topic=4))  # a new index, a new ranker
    service.indexes.embed_new()
    encoder.calls.clear()
    service.search(query)
    assert query not in encoder.calls
