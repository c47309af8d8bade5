"""The score a digest shows is how often such a paper was relevant (issue 22: calibration).

The shipped curve (digest/rank/calibration.txt, an isotonic fit per query kind written by
`python -m bench.calibration --write`) turns a topic's raw match score into the share of papers
shown at that score that were relevant on the development files; the channel's threshold is
compared with that value. Breaks that turn this red (each tried, then restored):
- `Ranker.score_profile` leaving topic scores raw (`take` without `calibrate.relevance`): the
  shown score is the raw one, and a keyword paper under the threshold once calibrated is sent;
- `calibrate.kind_of` calling every topic a keyword: a six-word theme is read through the
  keyword curve (red in the first test);
- the curve file missing: `relevance` returns the raw score (the first test fails);
- `Ranker.score_profile` not telling `relevance` that meaning was fused (``fused`` left False),
  or `relevance` ignoring ``fused``: a fused theme score is read through the lexical curve,
  which overstates it (0.35 fused: 0.54 read, 0.35 relevant on the development files), red in
  the last test.
"""

from __future__ import annotations

import numpy as np
import pytest

from digest import BUNDLED_PAPERS
from digest.rank import calibrate
from digest.rank.profile import Profile
from digest.rank.scorer import score


def test_the_shipped_curves_are_reliability_curves():
    """Every kind ships (a fused keyword curve, fitted on too few queries, is read through the
    keyword one): each increasing in the score, within 0..1, and not the raw score (a keyword
    paper at the best raw score was relevant far less often than always on the development
    files)."""
    curves = calibrate.curves()
    kinds = ("keyword", "theme", "loose")
    fused = {k + calibrate.FUSED for k in kinds[1:]}
    assert set(curves) == {*kinds, *fused, calibrate.LIKE, calibrate.LIKE + calibrate.FUSED}
    for kind, (_, b, _, cap) in curves.items():
        assert b > 0 and 0 < cap <= 1, kind  # a higher score never shows less
    grid = np.linspace(0, 1, 101)
    for kind, words in (("keyword", 2), ("theme", 6)):
        y = calibrate.relevance(grid, words)
        assert (np.diff(y) >= -1e-9).all() and y.min() >= 0 and y.max() <= 1, kind
        assert not np.allclose(y, grid, atol=0.05), kind
    assert calibrate.relevance(np.array([0.5]), 2)[0] < calibrate.relevance(np.array([0.5]), 6)[0]
    assert calibrate.relevance(np.array([0.0]), 6)[0] == 0  # no match is shown as none


def test_a_topic_that_lists_several_things_is_read_as_a_theme():
    """'causal inference and causal discovery' (three content words) is a field, not a keyword:
    on the theme file such topics' papers were relevant at 0.70 where the keyword curve read
    0.20. Break that turns this red: ``calibrate.lists`` always False."""
    assert calibrate.kind_of(3, 0.9, calibrate.lists("causal inference and discovery")) == "theme"
    assert calibrate.kind_of(2, 1.0, calibrate.lists("federated learning")) == "keyword"
    assert calibrate.kind_of(3, 1.0, calibrate.lists("3D vision: point clouds")) == "theme"


@pytest.fixture(scope="module")
def ranker(tmp_path_factory):
    from digest.papers.service import PaperService
    from digest.store import Store

    folder = tmp_path_factory.mktemp("calibrated")
    store = Store.open(f"sqlite:///{folder / 'c.db'}")
    papers = PaperService(store, folder / "index")
    papers.ingest(str(BUNDLED_PAPERS))
    return papers.ranker()


@pytest.mark.parametrize(
    "topic", ["sparse autoencoders", "interpretability of language model features and circuits"]
)
def test_a_digest_shows_and_thresholds_the_calibrated_score(ranker, topic):
    ids = list(ranker.index.ids)
    state = ranker.state(topic)
    every = np.arange(len(ids))  # a digest scores every candidate paper, matched or not
    rows, raw = score(ranker.index, state, every, ranker.params)
    raw_of = {ranker.index.ids[r]: float(s) for r, s in zip(rows.tolist(), raw, strict=True)}
    picks = ranker.rank(Profile(topics=(topic,)), ids, size=len(ids), threshold=0.0).hits
    assert picks
    for h in picks:
        want = calibrate.relevance(
            np.array([raw_of[h.paper_id]]), state.query.words, coverage=state.coverage
        )[0]
        assert h.score == pytest.approx(float(want), abs=1e-4), h
    # the threshold sees the calibrated value: a paper above it raw but not calibrated stays out
    threshold = 0.3
    sent = {
        h.paper_id for h in ranker.rank(Profile(topics=(topic,)), ids, len(ids), threshold).hits
    }
    assert sent == {h.paper_id for h in picks if h.score >= threshold}
    if calibrate.kind_of(state.query.words) == "keyword":  # the case the threshold now drops
        assert any(raw_of[h.paper_id] >= threshold > h.score for h in picks)


class OneDirection:
    """A stand-in encoder: every text has the same vector (no model needed)."""

    def __init__(self, direction: np.ndarray) -> None:
        self.direction = direction

    def encode(self, texts, **kw):
        return np.tile(self.direction, (len(texts), 1))


def test_a_fused_theme_score_is_read_through_its_own_curve(ranker):
    """With meaning in a theme's score (semantic ranking), the digest reads it through the
    curve fitted on fused scores, which is lower than the lexical one where it was measured to be
    (a fused 0.35 was relevant 1 time in 3, a lexical 0.35 1 in 2)."""
    from digest.rank.ranker import Ranker

    index = ranker.index
    vecs = np.random.default_rng(0).normal(size=(len(index.ids), 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    index.dense, index.has_dense = vecs, np.ones(len(index.ids), dtype=bool)
    try:
        fused = Ranker(index, ranker.params, encoder=OneDirection(vecs[0]))
        topic = "interpretability of language model features and circuits"
        state = fused.state(topic)
        assert state.dense is not None and state.dense.weight > 0
        every = np.arange(len(index.ids))  # as a digest scores its candidates: all of them
        rows, raw = score(index, state, every, fused.params)
        raw_of = {index.ids[r]: float(s) for r, s in zip(rows.tolist(), raw, strict=True)}
        ids = list(index.ids)
        picks = fused.rank(Profile(topics=(topic,)), ids, size=len(ids), threshold=0.0).hits
        assert picks
        words = state.query.words
        for h in picks:
            x = np.array([raw_of[h.paper_id]])
            want = calibrate.relevance(x, words, True, state.coverage)[0]
            assert h.score == pytest.approx(float(want), abs=1e-4)
    finally:
        index.dense = index.has_dense = None
