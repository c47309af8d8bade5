"""Semantic ranking (the optional `semantic` extra): embeddings stored at ingest, fused by query.

Tests that need the model skip only when the extra is not installed. Breaks tried (each turns a
test red): `EmbeddingStore.embed` not skipping stored ids (re-encodes on every ingest);
`query_weight` returning 0.7 for every query (keyword queries lose their lexical order);
`topic_why` never saying 'close in meaning'; `_with_vectors` not attaching stored vectors.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from digest.index.embeddings import model_files
from digest.index.lifecycle import IndexStore
from digest.ingest.parse import make_record
from digest.rank.semantic import SemanticParams, query_weight
from tests.support.corpus import synthetic_records

needs_model = pytest.mark.semantic  # skipped without the extra (tests/conftest.py)


@pytest.fixture(autouse=True)
def semantic_on(monkeypatch):
    """The suite runs with semantic ranking off (conftest); these tests turn it on."""
    monkeypatch.setenv("DIGESTBOT_SEMANTIC", "auto")


MEANING = make_record(
    source="jsonl",
    id="meaning-1",
    title="Shaping rewards to guide the exploration of agents",
    abstract=(
        "Exploration bonuses and shaped rewards help agents discover good behaviour in "
        "environments where rewards are rare; we study when they pay off over long horizons."
    ),
)
QUERY = "reinforcement learning with policy gradient methods and value functions"


def small_corpus():
    return [r for r in synthetic_records(per_topic=4)][:30] + [MEANING]


def test_keyword_queries_stay_lexical_and_descriptive_ones_use_meaning():
    p = SemanticParams()
    assert query_weight(1, p) == query_weight(3, p) == 0.0
    assert 0 < query_weight(5, p) < query_weight(7, p) == p.max_weight


def test_meaning_can_follow_the_corpus_but_word_count_decides_as_shipped():
    """The corpus rules of the retired bench/fusion.py (docs/benchmarks-history.md) (not adopted: they cost keyword queries, see
    docs/benchmarks.md): a field reaching 30% of papers gets meaning's full share under
    "specific", none under the shipped "words"; the specific reach skips generic words."""
    from digest.rank.index import DocInput, build_index
    from digest.rank.scorer import compile_query, lexical, specific_reach

    words, spec = SemanticParams(), SemanticParams(weight_by="specific")
    assert query_weight(1, words, reach=0.3, specific=0.3) == 0.0
    assert query_weight(1, spec, specific=0.3) == spec.max_weight
    assert query_weight(1, spec, specific=0.005) == 0.0
    assert 0 < query_weight(1, spec, specific=0.05) < spec.max_weight
    flat = SemanticParams(weight_by="flat")
    assert query_weight(1, flat, flat=0.6) == 0.0 < query_weight(1, flat, flat=0.97)
    assert query_weight(7, SemanticParams(weight_by="either"), specific=0.005) == 0.7
    index = build_index([DocInput(r.id, r.title, r.abstract) for r in small_corpus()])
    q = compile_query(index, "reinforcement learning")
    assert 0 < specific_reach(index, q) < float((lexical(index, q) > 0).mean())  # not 'learning'


def test_without_the_extra_ranking_is_lexical_and_silent(sqlite_store, tmp_path, monkeypatch):
    monkeypatch.setenv("DIGESTBOT_SEMANTIC", "off")
    sqlite_store.papers.upsert(small_corpus())
    store = IndexStore(sqlite_store, tmp_path)
    assert store.embeddings is None and store.embed_new() == 0
    index = store.current()
    assert index.dense is None
    assert not list(tmp_path.glob("embeddings-*"))


def test_a_bad_model_folder_is_a_clear_error(tmp_path, monkeypatch):
    from digest.index.model_hub import ModelUnavailableError

    monkeypatch.setenv("DIGESTBOT_EMBEDDING_PATH", str(tmp_path))
    with pytest.raises(ModelUnavailableError, match="model.onnx and tokenizer.json"):
        model_files()


@needs_model
def test_embeddings_are_stored_once_and_reused(sqlite_store, tmp_path, monkeypatch):
    sqlite_store.papers.upsert(small_corpus())
    first = IndexStore(sqlite_store, tmp_path)
    assert first.embed_new() == len(small_corpus())
    chunks = sorted(tmp_path.glob("embeddings-*/chunk-*.npz"))
    assert chunks
    index = first.current()
    assert index.has_dense.all() and np.allclose(np.linalg.norm(index.dense, axis=1), 1, atol=1e-3)
    fresh = IndexStore(sqlite_store, tmp_path)  # a restarted bot: nothing is encoded again
    calls = []
    monkeypatch.setattr(fresh.encoder, "encode", lambda texts, **kw: calls.append(texts))
    assert fresh.embed_new() == 0 and not calls
    assert fresh.current().has_dense.all()
    assert sorted(tmp_path.glob("embeddings-*/chunk-*.npz")) == chunks


@needs_model
def test_an_interrupted_run_resumes_where_it_stopped(sqlite_store, tmp_path, monkeypatch):
    import digest.index.vectors as es

    monkeypatch.setattr(es, "CHUNK", 8)
    sqlite_store.papers.upsert(small_corpus())
    store = IndexStore(sqlite_store, tmp_path)
    real = store.encoder.encode
    done = []

    def crash_after_one_chunk(texts, **kw):
        if done:
            raise KeyboardInterrupt
        done.append(len(texts))
        return real(texts, **kw)

    monkeypatch.setattr(store.encoder, "encode", crash_after_one_chunk)
    with pytest.raises(KeyboardInterrupt):
        store.embed_new()
    monkeypatch.setattr(store.encoder, "encode", real)
    again = IndexStore(sqlite_store, tmp_path)
    assert again.embed_new() == len(small_corpus()) - 8


class FakeEncoder:
    """Maps every text to one fixed direction: the 'meaning' paper is the only one there."""

    def __init__(self, direction: np.ndarray) -> None:
        self.direction = direction

    def encode(self, texts, **kw):
        return np.tile(self.direction, (len(texts), 1))


def test_meaning_brings_a_paper_with_no_shared_word_and_says_so():
    from digest.rank.index import DocInput, build_index
    from digest.rank.ranker import Ranker

    docs = [DocInput(r.id, r.title, r.abstract) for r in small_corpus()]
    index = build_index(docs)
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(len(docs), 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    index.dense, index.has_dense = vecs, np.ones(len(docs), dtype=bool)
    row = index.pos["meaning-1"]
    lexical = Ranker(index).search(QUERY, per_page=50)
    assert "meaning-1" not in {h.paper_id for h in lexical.hits}
    fused = Ranker(index, encoder=FakeEncoder(vecs[row])).search(QUERY, per_page=10)
    hit = next(h for h in fused.hits if h.paper_id == "meaning-1")
    assert hit.why == f"close in meaning to '{QUERY[:40]}…'"
    assert all(h.why.startswith("matches") for h in fused.hits if h.paper_id != "meaning-1")
    keyword = Ranker(index, encoder=FakeEncoder(vecs[row])).search("policy gradient")
    assert [h.paper_id for h in keyword.hits] == [
        h.paper_id for h in Ranker(index).search("policy gradient").hits
    ]  # a keyword query keeps its lexical order


@needs_model
def test_real_model_ranks_a_descriptive_query_by_topic(sqlite_store, tmp_path):
    from digest.rank.ranker import Ranker

    sqlite_store.papers.upsert(small_corpus())
    store = IndexStore(sqlite_store, tmp_path)
    store.embed_new()
    ranker = Ranker(store.current(), encoder=store.encoder)
    assert ranker.state(QUERY).dense.weight > 0
    top = [h.paper_id for h in ranker.search(QUERY, per_page=4).hits]
    assert all(pid.startswith("syn-rl-") for pid in top)


@needs_model
def test_similar_uses_the_embeddings(sqlite_store, tmp_path):
    from digest.rank.ranker import Ranker

    sqlite_store.papers.upsert(small_corpus())
    store = IndexStore(sqlite_store, tmp_path)
    store.embed_new()
    index = store.current()
    hits = Ranker(index, encoder=store.encoder).similar("meaning-1", k=3)
    assert hits and hits[0].paper_id.startswith("syn-rl-")


def test_packaged_model_files_exist_when_installed():
    files = model_files()
    if files is None:
        pytest.skip("semantic extra not installed")
    assert Path(files.model).stat().st_size > 10_000_000 and Path(files.tokenizer).is_file()


@needs_model
def test_a_local_model_folder_is_used(tmp_path, monkeypatch):
    from digest.index.embeddings import load_encoder

    packaged = model_files()
    (tmp_path / "model.onnx").symlink_to(packaged.model)
    (tmp_path / "tokenizer.json").symlink_to(packaged.tokenizer)
    monkeypatch.setenv("DIGESTBOT_EMBEDDING_PATH", str(tmp_path))
    encoder = load_encoder()
    assert encoder.files.model == tmp_path / "model.onnx"
    a, b, c = encoder.encode(["sparse autoencoders", "dictionary learning of features", "tax law"])
    assert float(a @ b) > float(a @ c)  # real meaning, not noise
