"""The score a digest shows is how often such a paper was relevant (issue 22: calibration).

The shipped curve (digest/rank/calibration.txt, an isotonic fit per query kind written by
`python -m bench.calibration --write`) turns a topic's raw match score into the share of papers
shown at that score that were relevant on the development files; the channel's threshold is
compared with that value. Breaks that turn this red (each tried, then restored):
- `Ranker.score_profile` leaving topic scores raw (`take` without `calibrate.relevance`): the
  shown score is the raw one, and a keyword paper under the threshold once calibrated is sent;
- `calibrate.kind_of` calling every topic a keyword: a six-word theme is read through the
  keyword curve (red in the first test);
- the curve file missing: `relevance` returns the raw score (the first test fails).
"""

from __future__ import annotations

import numpy as np
import pytest

from digest import BUNDLED_PAPERS
from digest.rank import calibrate
from digest.rank.profile import Profile
from digest.rank.scorer import score


def test_the_shipped_curves_are_reliability_curves():
    """Both kinds ship: non-decreasing, within 0..1, and not the raw score (a keyword paper at
    the best raw score was relevant far less often than always on the development files)."""
    curves = calibrate.curves()
    assert set(curves) == {"keyword", "theme"}
    grid = np.linspace(0, 1, 101)
    for kind, words in (("keyword", 2), ("theme", 6)):
        y = calibrate.relevance(grid, words)
        assert (np.diff(y) >= -1e-9).all() and y.min() >= 0 and y.max() <= 1, kind
        assert not np.allclose(y, grid, atol=0.05), kind
    assert calibrate.relevance(np.array([0.5]), 2)[0] < calibrate.relevance(np.array([0.5]), 6)[0]


@pytest.fixture(scope="module")
def ranker(tmp_path_factory):
    from digest.paper_service import PaperService
    from digest.store import Store

    folder = tmp_path_factory.mktemp("calibrated")
    store = Store.open(f"sqlite:///{folder / 'c.db'}")
    papers = PaperService(store, folder / "index")
    papers.ingest(str(BUNDLED_PAPERS))
    return papers.ranker()


@pytest.mark.parametrize("topic", ["sparse autoencoders",
                                   "interpretability of language model features and circuits"])  # fmt: skip
def test_a_digest_shows_and_thresholds_the_calibrated_score(ranker, topic):
    ids = list(ranker.index.ids)
    state = ranker.state(topic)
    rows, raw = score(ranker.index, state, None, ranker.params)
    raw_of = {ranker.index.ids[r]: float(s) for r, s in zip(rows.tolist(), raw, strict=True)}
    picks = ranker.rank(Profile(topics=(topic,)), ids, size=len(ids), threshold=0.0).hits
    assert picks
    for h in picks:
        want = calibrate.relevance(np.array([raw_of[h.paper_id]]), state.query.words)[0]
        assert h.score == pytest.approx(float(want), abs=1e-4), h
    # the threshold sees the calibrated value: a paper above it raw but not calibrated stays out
    threshold = 0.3
    sent = {
        h.paper_id for h in ranker.rank(Profile(topics=(topic,)), ids, len(ids), threshold).hits
    }
    assert sent == {h.paper_id for h in picks if h.score >= threshold}
    if calibrate.kind_of(state.query.words) == "keyword":  # the case the threshold now drops
        assert any(raw_of[h.paper_id] >= threshold > h.score for h in picks)
