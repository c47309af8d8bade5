"""`/papers similar`: by the embeddings once every paper has one, by the LSA space otherwise.

A stand-in encoder gives one sparse-autoencoder paper the very vector of a reinforcement-learning
paper, so the two spaces disagree on its nearest neighbour and the reply shows which was used.
Breaks tried, each turns a test here red: `paper_space` always returning the LSA vectors (the
embeddings are never used); `paper_space` returning the embeddings while some paper has none
(papers not embedded yet score 0 and vanish from the reply).
"""

from __future__ import annotations

import numpy as np
import pytest

import digest.index.lifecycle as index_store
from bot.commands import Context
from digest.index.embeddings import paper_text
from digest.index.vectors import hash_text, pack, text_hash
from digest.models import ChannelRef
from tests.conftest import make_app
from tests.index.test_embedding_store import HashEncoder, vec
from tests.support.corpus import synthetic_records

TARGET, PARTNER = "syn-sae-1", "syn-rl-2"
RECORDS = synthetic_records(per_topic=10)
TEXT = {r.id: paper_text(r.title, r.abstract) for r in RECORDS}


class PairEncoder(HashEncoder):
    """Hash vectors, except that TARGET's text gets PARTNER's vector."""

    def encode(self, texts: list[str], **kw) -> np.ndarray:
        return np.stack([vec(TEXT[PARTNER] if t == TEXT[TARGET] else t) for t in texts])


def similar(app) -> list[str]:
    ctx = Context(ChannelRef("console", "lab"), user="u1")
    return [c.paper_id for c in app.commands.handle(f"similar {TARGET}", ctx).cards]


@pytest.fixture
def embedded_app(tmp_path, monkeypatch):
    monkeypatch.setattr(index_store, "load_encoder", lambda *a, **k: PairEncoder())
    app = make_app(f"sqlite:///{tmp_path / 'app.db'}", tmp_path, RECORDS)
    yield app
    app.close()


def test_without_embeddings_similar_is_lexical(tmp_path):
    app = make_app(f"sqlite:///{tmp_path / 'app.db'}", tmp_path, RECORDS)
    try:
        ids = similar(app)
        assert ids and PARTNER not in ids[:1] and ids[0].startswith("syn-sae-")
    finally:
        app.close()


def test_with_embeddings_similar_uses_them(embedded_app):
    assert embedded_app.papers.indexes.embed_new() == len(RECORDS)
    ids = similar(embedded_app)
    assert ids[0] == PARTNER  # the embeddings' nearest, which shares few words with the paper


def test_while_papers_are_being_embedded_similar_stays_lexical(embedded_app):
    vectors = embedded_app.papers.indexes.embeddings
    claim = embedded_app.store.embeddings.claim(vectors.model, "test", 1000, 60)
    papers = [p for p in embedded_app.store.papers.iter_all() if p.id != "syn-sae-3"]
    encoded = vectors.encoder.encode([paper_text(p.title, p.abstract) for p in papers])
    rows = {p.id: (text_hash(p), pack(v)) for p, v in zip(papers, encoded, strict=True)}
    assert embedded_app.store.embeddings.store(claim, rows, hash_text) == len(papers)
    ids = similar(embedded_app)
    assert ids[0].startswith("syn-sae-") and ids[0] != PARTNER
