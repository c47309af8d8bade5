"""A 👍 refines a channel's ranking; it must not push the topic's other matches below the threshold.

With the bundled papers (digest/data/neurips2026.txt), one 👍 on a 'sparse autoencoders' paper took
the other one from 0.75 to 0.27 and emptied the next digest. Breaks tried on purpose (each
turned at least one test red):
- `calibrate.scale` returning 1.0 (refined scores uncalibrated: the old collapse);
- `Ranker.rank` checking the threshold on the raw learner score instead of the calibrated one;
- MMR fed the calibrated score (with several interests the order changed) — checked by
  `test_calibration_keeps_the_learners_order` via a two-topic profile;
- near misses counted on the raw score instead of the score shown.
"""

from __future__ import annotations

from datetime import date

import pytest

from digest import BUNDLED_PAPERS
from digest.channels.service import ChannelService
from digest.delivery.digests import Digests
from digest.models import ChannelRef, SubscriptionKind
from digest.papers.service import PaperService
from digest.rank import calibrate
from digest.rank.profile import Profile
from digest.rank.ranker import Ranker

DATA = BUNDLED_PAPERS
TOPICS = ("sparse autoencoders", "LLM alignment", "activation steering", "unlearning")
THRESHOLD = 0.3
CLEAR = 2 * THRESHOLD  # a paper scoring twice the threshold matches the topic clearly


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> ChannelService:
    from digest.store import Store

    folder = tmp_path_factory.mktemp("calibration")
    store = Store.open(f"sqlite:///{folder / 'c.db'}")
    papers = PaperService(store, folder / "index")
    papers.ingest(str(DATA))
    return ChannelService(papers)


def scores(ranker: Ranker, profile: Profile, threshold: float = 0.0) -> dict[str, float]:
    ids = list(ranker.index.ids)
    picks = ranker.rank(profile, ids, size=len(ids), threshold=threshold, diversity=0.3)
    return {h.paper_id: h.score for h in picks.hits}


@pytest.mark.parametrize("topic", TOPICS)
def test_a_like_keeps_the_topics_clear_matches_above_the_threshold(svc, topic):
    ranker = svc.papers.ranker()
    before = scores(ranker, Profile(topics=(topic,)))
    matched = [p for p, s in before.items() if s >= THRESHOLD]
    assert matched, f"{topic!r} matches no bundled paper"
    for liked in matched:
        after = scores(ranker, Profile(topics=(topic,), votes=((liked, 1),)))
        others = [p for p in matched if p != liked]
        lost = [p for p in others if after[p] < THRESHOLD]
        clear = [p for p in lost if before[p] >= CLEAR]
        assert not clear, (topic, liked, {p: (before[p], after[p]) for p in clear})
        # The vote may reorder the rest, but it does not empty the topic: something else still
        # passes. (Scores are calibrated now, and the threshold 0.3 sits where a keyword topic's
        # curve is steep: one 👍 in 'LLM alignment' takes two of its three other matches from
        # 0.35 to 0.18 and 0.23; on the raw scale, threshold 0.3, three in four stayed.)
        kept = [p for p in others if after[p] >= THRESHOLD]
        assert not others or kept, (topic, liked, {p: (before[p], after[p]) for p in lost})


def test_the_testers_repro_still_gets_a_digest(svc):
    """👍 on one SAE paper: the other SAE paper is still sent in the next digest."""
    ref = ChannelRef("console", "g")
    svc.follows.add(ref, SubscriptionKind.TOPIC, "sparse autoencoders")
    svc.vote(ref, "ann", "neurips-928c3ba0ef8b", 1)
    digest = Digests(svc).preview(ref, date(2026, 12, 1))
    assert "neurips-9705088820d6" in [i.paper.id for i in digest.items], digest.summary()


def test_calibration_keeps_the_learners_order(svc, monkeypatch):
    """Only the shown scores see the factor: at threshold 0 the same papers are picked (cards are
    then listed by the score they show, which the factor moves across the channel's topics)."""
    ranker = svc.papers.ranker()
    ids = list(ranker.index.ids)
    votes = (("neurips-928c3ba0ef8b", 1), ("neurips-fb508ea1b150", -1))
    profile = Profile(topics=("sparse autoencoders", "LLM alignment"), votes=votes)
    calibrated = {h.paper_id for h in ranker.rank(profile, ids, 8, 0.0, 0.3).hits}
    monkeypatch.setattr(calibrate, "scale", lambda *a: 1.0)
    plain = Ranker(ranker.index)
    assert {h.paper_id for h in plain.rank(profile, ids, 8, 0.0, 0.3).hits} == calibrated


def test_near_misses_are_counted_on_the_scores_shown(svc):
    ranker = svc.papers.ranker()
    profile = Profile(topics=("LLM alignment",), votes=(("neurips-fb508ea1b150", 1),))
    shown = scores(ranker, profile)
    ids = list(ranker.index.ids)
    for threshold in (0.5, 0.7, 0.9):
        picks = ranker.rank(profile, ids, size=len(ids), threshold=threshold)
        near = sum(0.6 * threshold <= s < threshold for s in shown.values())
        assert picks.near_misses == near, threshold
        assert all(h.score >= threshold for h in picks.hits)
