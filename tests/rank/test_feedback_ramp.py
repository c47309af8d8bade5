"""A few votes move a topic less than many (issue 22: lift at 5 votes never below 0).

Breaks that turn this red (each tried, then restored): `feedback.ramped` returning ``fp`` as it
is (5 votes pull as hard as 20); `ramped` scaling at or above ``full_at`` too (20 votes weaker).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from digest import BUNDLED_PAPERS
from digest.rank import feedback


def test_pulls_grow_with_the_votes_until_full_at():
    fp = feedback.FeedbackParams(full_at=10)
    half = feedback.ramped(fp, 5)
    for name in ("term_scale", "latent_pos", "latent_neg", "neg_scale", "dense_neg", "dense_mix"):
        assert getattr(half, name) == pytest.approx(getattr(fp, name) / 2), name
    assert feedback.ramped(fp, 10) == fp and feedback.ramped(fp, 20) == fp
    assert feedback.ramped(replace(fp, full_at=0), 1) == replace(fp, full_at=0)


def test_one_vote_moves_the_topic_less_than_at_full_strength(tmp_path):
    from digest.papers.service import PaperService
    from digest.store import Store

    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    papers = PaperService(store, tmp_path / "index")
    papers.ingest(str(BUNDLED_PAPERS))
    ranker = papers.ranker()
    base = ranker.state("sparse autoencoders")
    liked = [1]

    def moved(fp: feedback.FeedbackParams) -> float:
        state = feedback.learn(ranker.index, base, liked, [], ranker.params, fp)
        return float(np.linalg.norm(state.direction - base.direction))

    ramped, full = (
        moved(feedback.FeedbackParams(full_at=10)),
        moved(feedback.FeedbackParams(full_at=0)),
    )
    assert 0 < ramped < full
