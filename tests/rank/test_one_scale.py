"""One scale for every interest (issue 34): `like:` papers, votes and typed topics.

On the synthetic corpus (tests/corpus.py: six topics, 30 papers each). Before, each `like:` paper
was an interest of its own scored by raw closeness (0.70-0.85 on the issue's corpus) while a typed
topic was read through its calibrated curve (at most 0.63): a channel that imported 20 papers and
typed 3 topics gave the likes 20 turns of the digest against the topics' 3, and every like outranked
every topic match. Now the liked papers are one interest (``ranker.interest_groups``), split into
tastes (``profile.like_parts``), scored together by the vote learner and read through the liked
papers' own curve (``calibrate.LIKE``).

Breaks that turn this red (each tried, then restored):
- `interest_groups` giving every `like:` label its own group (`test_every_liked_paper_is_one_interest`;
  the share test alone stays green then: on one scale the topics' best papers take their turns
  first).
- `like_parts` returning one part for any library: the three unrelated liked papers share one
  centroid and one of them gets no pick (`test_unrelated_liked_papers_are_tastes_of_their_own`).
- `fair_share` ignoring ``sub``: the like interest's turns all go to its best-scoring liked paper
  (`test_unrelated_liked_papers_are_tastes_of_their_own`).
"""

from __future__ import annotations

import numpy as np
import pytest

from digest.rank.index import DocInput, build_index
from digest.rank.profile import Profile, like_parts
from digest.rank.ranker import Ranker, interest_groups
from tests.support.corpus import synthetic_records


@pytest.fixture(scope="module")
def ranker() -> Ranker:
    docs = [DocInput(r.id, r.title, r.abstract) for r in synthetic_records(per_topic=30)]
    return Ranker(build_index(docs))


def ids_of(ranker: Ranker, prefix: str) -> list[str]:
    return [i for i in ranker.index.ids if i.startswith(prefix)]


def test_every_liked_paper_is_one_interest():
    groups = interest_groups(["topic:a", "like:x", "like:y", "author:b", "topic:c", "like:z"])
    assert groups.tolist() == [0, 1, 1, 2, 3, 1, -1]


def test_a_typed_topic_beside_20_imported_likes_gets_its_share(ranker):
    """20 imported papers on diffusion, 3 typed topics: each typed topic gets a place in every
    digest while it has papers above the threshold, and the likes keep theirs."""
    likes = tuple(ids_of(ranker, "syn-diffusion-")[:20])
    topics = ("graph neural networks", "federated learning", "sparse autoencoders")
    profile = Profile(topics=topics, likes=likes)
    candidates = [i for i in ranker.index.ids if i not in likes]
    for day in range(5):  # five digests, each without the papers already sent
        picks = ranker.rank(profile, candidates, size=5, threshold=0.3, diversity=0.0)
        kinds = [h.why.split(":")[0] for h in picks.hits]
        sent = {h.paper_id for h in picks.hits}
        assert len(picks.hits) == 5, (day, kinds)
        for prefix in ("syn-gnn-", "syn-fl-", "syn-sae-"):
            assert any(p.startswith(prefix) for p in sent), (day, prefix, sorted(sent))
        assert any(p.startswith("syn-diffusion-") for p in sent), (day, sorted(sent))
        candidates = [i for i in candidates if i not in sent]


def test_likes_and_typed_topics_are_read_on_one_scale(ranker):
    """A like's best match no longer outranks every typed topic's: the shown score of each kind
    is its share relevant (the curves), so a typed topic's clear matches stand beside the likes'."""
    likes = tuple(ids_of(ranker, "syn-diffusion-")[:20])
    topic = "graph neural networks"
    rows = np.array(
        [ranker.index.pos[i] for i in ranker.index.ids if i not in likes], dtype=np.int64
    )
    _, level, source, labels = ranker.score_profile(Profile(topics=(topic,), likes=likes), rows)
    kind = np.array([labels[s].split(":")[0] if s >= 0 else "" for s in source])
    best_like, best_topic = level[kind == "like"].max(), level[kind == "topic"].max()
    assert best_topic >= 0.3 and best_like >= 0.3
    assert best_like <= best_topic + 0.25  # before: raw closeness above every calibrated topic


def test_unrelated_liked_papers_are_tastes_of_their_own(ranker):
    """A library of three unrelated papers is three tastes, each with a pick in the digest; five
    papers of one field are one taste (their centroid ranks the field)."""
    three = (
        ids_of(ranker, "syn-gnn-")[0],
        ids_of(ranker, "syn-sae-")[0],
        ids_of(ranker, "syn-diffusion-")[0],
    )
    related = ranker.related()
    assert len(like_parts(ranker.index, three, related)) == 3
    assert len(like_parts(ranker.index, tuple(ids_of(ranker, "syn-rl-")[:5]), related)) == 1
    candidates = [i for i in ranker.index.ids if i not in three]
    picks = ranker.rank(Profile(likes=three), candidates, size=3, threshold=0.3, diversity=0.0)
    fields = {h.paper_id.rsplit("-", 1)[0] for h in picks.hits}
    assert fields == {"syn-gnn", "syn-sae", "syn-diffusion"}, [h.paper_id for h in picks.hits]
