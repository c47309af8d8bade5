"""A taste with no typed words (liked papers, votes alone) reads meaning when papers are embedded.

Breaks that turn this red (each tried, then restored): `feedback.learn` leaving a taste's state
without meaning (``dense`` None, as before); the taste's share ramped by `full_at` like a pull
(5 liked papers get half of it); `calibrate.read` ignoring ``fused`` (a fused taste read
through the `like` curve).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from digest import BUNDLED_PAPERS
from digest.rank import feedback
from digest.rank.scorer import score


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    from digest.papers.service import PaperService
    from digest.store import Store

    tmp = tmp_path_factory.mktemp("taste")
    store = Store.open(f"sqlite:///{tmp / 'r.db'}")
    papers = PaperService(store, tmp / "index")
    papers.ingest(str(BUNDLED_PAPERS))
    return papers.ranker().index


def embedded(index, liked: list[int], near: int):
    """``index`` with random unit vectors, paper ``near`` placed at the liked papers' centroid."""
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(len(index), 64)).astype(np.float32)
    vecs[near] = vecs[liked].mean(axis=0)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return replace(index, dense=vecs, has_dense=np.ones(len(index), dtype=bool))


def test_a_taste_ranks_what_is_close_in_meaning_to_its_liked_papers(index):
    liked = [0, 1, 2, 3, 4]
    rows = np.arange(len(index))
    plain = feedback.learn(index, None, liked, [])
    assert plain is not None and plain.dense is None  # no embeddings: words and LSA, as before
    before = score(index, plain, rows)[1]
    near = min(set(rows.tolist()) - set(liked), key=lambda r: before[r])  # words rank it last
    ix = embedded(index, liked, near)
    st = feedback.learn(ix, None, liked, [])
    assert st is not None and st.dense is not None
    # the share a voted topic gives meaning, from the liked papers alone (not ramped by votes)
    assert st.dense.weight == pytest.approx(feedback.PARAMS.dense_mix)
    more = feedback.learn(ix, None, liked, [r for r in rows.tolist() if r not in liked][:10])
    assert more.dense.weight == st.dense.weight
    assert int(np.argmax(st.dense.scores)) == near
    after = score(ix, st, rows)[1]
    others = np.delete(rows, liked + [near])
    assert (after[near] > after[others]).mean() > (before[near] > before[others]).mean()


def test_a_typed_topic_keeps_its_own_meaning_share(index):
    from digest.rank.scorer import ScoreParams, compile_query, topic_state

    ix = embedded(index, [0, 1], 7)
    q = compile_query(ix, "sparse autoencoders", ScoreParams())
    base = topic_state(ix, q, ScoreParams())  # no query vector: meaning has no share
    st = feedback.learn(ix, base, [0, 1], [])
    assert st is not None and (st.dense is None or st.dense.weight == 0)


def test_a_fused_taste_is_read_through_its_own_curve():
    from digest.rank import calibrate

    raw = np.array([0.3, 0.5, 0.6], dtype=np.float32)
    fused = calibrate.read(raw, calibrate.LIKE, fused=True)
    curve = calibrate.curves()[calibrate.LIKE + calibrate.FUSED]
    assert np.allclose(fused, calibrate.logistic(curve, raw, None))
    # fused scores sit higher: the words-and-LSA curve would show them above what they are
    assert (fused < calibrate.read(raw, calibrate.LIKE)).all()
