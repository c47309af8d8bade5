"""Learning from 👍/👎 through the real path: votes stored by the channel service, digest composed.

Every test here goes red when feedback stops working. Breaks tried on purpose (each turned at
least one test red):
- `feedback.learn` returning ``base`` unchanged (votes ignored);
- 👍 and 👎 swapped in `profile.vote_rows`;
- `ChannelService.profile` dropping the votes;
- no borrowed words (`term_scale=0`), or no LSA pull (`latent_pos=0`), each on its own;
- `compose` passing the constant `DIVERSITY` instead of `diversity_for(profile)`;
- `feedback.diversity` still diversifying once a channel voted (the shrinking schedule, as before);
- no 👎 words (`neg_scale=0`), or 👎 and 👍 swapped in `_disliked_words`;
- `_dense_rocchio` ignoring the 👍 centroid, or applied to keyword topics (weight 0);
- the topic's PRF still leaning on 👎 papers (see the last test for its own breaks).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import numpy as np
import pytest

from digest.channels.service import ChannelService
from digest.delivery.compose import DIVERSITY, diversity_for
from digest.delivery.digests import Digests
from digest.models import ChannelRef, SubscriptionKind
from digest.papers.service import PaperService
from digest.rank import feedback
from digest.rank.profile import Profile
from digest.rank.scorer import top_rows
from digest.rank.semantic import DenseState
from tests.support.corpus import synthetic_records

DAY = date(2026, 12, 1)
TOPIC = "graph neural networks"


@pytest.fixture
def svc(sqlite_store, tmp_path):
    sqlite_store.papers.upsert(synthetic_records())
    return ChannelService(PaperService(sqlite_store, tmp_path / "index"))


def kind_ids(kind: str) -> list[str]:
    return [r.id for r in synthetic_records() if r.id.startswith(f"syn-gnn{kind}-")]


def digest_ids(svc: ChannelService, ref: ChannelRef, size: int = 8) -> list[str]:
    svc.settings.set_size(ref, str(size))
    svc.settings.set_threshold(ref, "0")
    return [i.paper.id for i in Digests(svc).preview(ref, DAY).items]


def follow(svc: ChannelService, name: str, topic: str | None = TOPIC) -> ChannelRef:
    ref = ChannelRef("test", name)
    if topic:
        svc.follows.add(ref, SubscriptionKind.TOPIC, topic)
    return ref


def share(ids: list[str], kind: str) -> int:
    return sum(i.startswith(f"syn-gnn{kind}-") for i in ids)


def vote_kinds(svc: ChannelService, ref: ChannelRef, up: str, down: str, n: int = 3) -> None:
    for pid in kind_ids(up)[:n]:
        svc.vote(ref, "ann", pid, 1)
    for pid in kind_ids(down)[:n]:
        svc.vote(ref, "ann", pid, -1)


@pytest.mark.parametrize(("up", "down"), [("het", "mol"), ("mol", "het")])
def test_next_digest_moves_towards_liked_kind_and_away_from_disliked(svc, up, down):
    cold = digest_ids(svc, follow(svc, "cold"))
    warm_ref = follow(svc, "warm")
    vote_kinds(svc, warm_ref, up, down)
    warm = digest_ids(svc, warm_ref)
    assert share(warm, up) >= share(cold, up) + 3, (cold, warm)
    assert share(warm, down) < share(cold, down) or share(warm, down) == 0, (cold, warm)
    assert share(warm, up) > share(warm, down)
    assert not set(warm) & set(kind_ids(up)[:3] + kind_ids(down)[:3])  # voted: never again


def test_votes_alone_make_a_digest_of_the_liked_kind(svc):
    ref = follow(svc, "votes-only", topic=None)
    vote_kinds(svc, ref, "het", "mol")
    picks = digest_ids(svc, ref, size=5)
    assert share(picks, "het") >= 4, picks


def test_withdrawn_votes_stop_counting(svc):
    ref = follow(svc, "undo")
    cold = digest_ids(svc, follow(svc, "twin"))
    vote_kinds(svc, ref, "het", "mol")
    vote_kinds(svc, ref, "het", "mol")  # the same vote again withdraws it
    assert digest_ids(svc, ref) == cold


def test_diversity_stops_once_the_channel_has_voted():
    """Near-duplicates are pushed apart until the first vote, not after (issue 22)."""
    assert diversity_for(Profile(topics=("x",))) == DIVERSITY
    weights = [
        diversity_for(Profile(votes=tuple((f"p{i}", 1) for i in range(n)))) for n in (1, 5, 20)
    ]
    assert weights == [0.0, 0.0, 0.0]


def test_with_many_votes_the_digest_keeps_to_the_liked_kind(svc):
    """At the cold-start MMR weight a digest spreads over both GNN sub-topics; 23 votes say which
    one the channel means, so its digest keeps to it (the 👎 kind never comes back)."""
    ref = follow(svc, "many")
    vote_kinds(svc, ref, "het", "mol")
    for pid in [r.id for r in synthetic_records() if r.id.startswith("syn-fl-")][:17]:
        svc.vote(ref, "ann", pid, -1)
    assert share(digest_ids(svc, ref, size=5), "het") == 5
    assert share(digest_ids(svc, ref, size=8), "mol") == 0


def test_words_of_disliked_papers_count_against_unvoted_papers_that_use_them(svc):
    """The 👎 kind's own words (molecules) lower the word score of molecule papers not yet voted
    on, and leave the 👍 kind (heterophily) alone; learned states are scored with and without."""
    ranker = svc.papers.ranker()
    index = ranker.index
    pos = [index.pos[p] for p in kind_ids("het")[:3]]
    neg = [index.pos[p] for p in kind_ids("mol")[:3]]
    base = ranker.state(TOPIC)
    fp = feedback.FeedbackParams()
    on = feedback.learn(index, base, pos, neg, ranker.params, fp)
    off = feedback.learn(index, base, pos, neg, ranker.params, replace(fp, neg_scale=0.0))
    mol = [index.pos[p] for p in kind_ids("mol")[3:]]
    het = [index.pos[p] for p in kind_ids("het")[3:]]
    drop_mol = float((off.lex[mol] - on.lex[mol]).mean())
    drop_het = float((off.lex[het] - on.lex[het]).mean())
    assert drop_mol > 0.05, drop_mol
    assert drop_het < drop_mol / 3, (drop_het, drop_mol)
    assert (on.lex >= 0).all() and np.array_equal(on.direction, off.direction)


def test_dense_feedback_pulls_towards_liked_meaning_only_for_descriptive_topics():
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(40, 16)).astype(np.float32)
    vecs[:10] += 4 * np.eye(16, dtype=np.float32)[0]  # a cluster the channel likes
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    flat = np.full(40, 0.5, dtype=np.float32)
    fp = feedback.FeedbackParams()
    has = np.ones(40, dtype=bool)
    moved = feedback._dense_rocchio(vecs, has, DenseState(flat, 0.5), [0, 1, 2], [30, 31], fp)
    assert moved.scores[3:10].mean() > moved.scores[10:].mean() + 0.2
    keyword = feedback._dense_rocchio(vecs, has, DenseState(flat, 0.0), [0, 1, 2], [30], fp)
    assert np.array_equal(keyword.scores, flat)
    has[5] = False  # not embedded yet: no pull either way, whatever its stale row holds
    partial = feedback._dense_rocchio(
        vecs, has, DenseState(flat, 0.5, has.copy()), [0, 1, 2], [30], fp
    )
    assert partial.scores[5] == pytest.approx(0.25)
    # which papers have a vector survives the step (fuse keeps their plain lexical score);
    # break seen red: a new DenseState(scores, weight) without `has`
    assert partial.has is not None and not partial.has[5]


def test_the_topics_pseudo_feedback_stops_leaning_on_its_best_matches_once_disliked(svc):
    """The plain topic's direction leans on its 5 best word matches (PRF); 👎 on two of them
    moves the learned direction away from them, beyond what the LSA push alone does, and 👎 on
    papers outside those 5 leaves the PRF as it was.

    Breaks that turn this red: `_without_disliked` not called (or `prf_skips_disliked` ignored);
    the 👍 rows zeroed instead of the 👎 ones; the lexical scores copied but not zeroed."""
    ranker = svc.papers.ranker()
    index = ranker.index
    base = ranker.state(TOPIC)
    prf = [int(r) for r in top_rows(base.lex, ranker.params.prf_docs)]
    pos = [index.pos[p] for p in kind_ids("het")[:3] if index.pos[p] not in prf]
    fp = feedback.FeedbackParams()
    old = replace(fp, prf_skips_disliked=False)
    neg = prf[:2]
    on = feedback.learn(index, base, pos, neg, ranker.params, fp)
    off = feedback.learn(index, base, pos, neg, ranker.params, old)
    near_on = index.latent[neg] @ on.direction
    near_off = index.latent[neg] @ off.direction
    assert (near_on < near_off - 0.01).all(), (near_on, near_off)
    far = [r for r in range(len(index)) if r not in prf and r not in pos][:3]
    same = feedback.learn(index, base, pos, far, ranker.params, fp)
    assert np.array_equal(
        same.direction, feedback.learn(index, base, pos, far, ranker.params, old).direction
    )
