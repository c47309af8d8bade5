"""Ranking behaviour on a synthetic corpus with known topics."""

import math

import numpy as np
import pytest

from digest.index.lifecycle import IndexStore, doc_input
from digest.rank.index import add_documents, build_index
from digest.rank.profile import Profile
from digest.rank.ranker import Filters, Ranker
from tests.support.corpus import synthetic_records


@pytest.fixture(scope="module")
def ranker():
    recs = synthetic_records()
    return Ranker(build_index([doc_input(r) for r in recs]))


def top_ids(ranker, query, k=10, **filters):
    return [h.paper_id for h in ranker.search(query, Filters(**filters), per_page=k).hits]


def topic_share(ids, prefix):
    return sum(i.startswith(prefix) for i in ids) / max(len(ids), 1)


@pytest.mark.parametrize(
    ("query", "prefix"),
    [
        ("sparse autoencoders", "syn-sae"),
        ("sparse autoencoder", "syn-sae"),  # singular finds plural
        ("SAEs", "syn-sae"),  # acronym -> long form, learned from the corpus
        ("GNN", "syn-gnn"),
        ("federated learning", "syn-fl-"),
        ("diffusion model", "syn-diffusion"),
    ],
)
def test_topic_queries_find_their_topic(ranker, query, prefix):
    assert topic_share(top_ids(ranker, query), prefix) >= 0.9


def test_acronyms_are_learned_from_the_corpus(ranker):
    table = ranker.index.acronyms.short_to_long
    assert table["sae"] == "sparse autoencoder" and table["llm"] == "large language model"


def test_search_filters_and_pagination(ranker):
    page1 = ranker.search("graph neural networks", per_page=5)
    page2 = ranker.search("graph neural networks", page=2, per_page=5)
    assert page1.total == page2.total > 10 and page1.pages >= 3
    assert not {h.paper_id for h in page1.hits} & {h.paper_id for h in page2.hits}
    scores = [h.score for h in page1.hits + page2.hits]
    assert scores == sorted(scores, reverse=True)
    by_author = ranker.search("graph neural networks", Filters(author="grace hopper"), per_page=50)
    idx = ranker.index
    assert by_author.hits and all(
        "grace hopper" in idx.authors[idx.pos[h.paper_id]] for h in by_author.hits
    )
    assert ranker.search("graph", Filters(year=1999)).message == "No papers match those filters."


def test_explanations_name_the_topic_and_terms_and_are_deterministic(ranker):
    hit = ranker.search("sparse autoencoders").hits[0]
    assert hit.why.startswith("matches 'sparse autoencoders'") and "sparse" in hit.why
    assert ranker.search("sparse autoencoders").hits[0].why == hit.why


ALL = [r.id for r in synthetic_records()]
GNN = [i for i in ALL if i.startswith("syn-gnn")]


def test_profile_combines_topics(ranker):
    picks = ranker.rank(
        Profile(topics=("federated learning", "diffusion models")), ALL, size=10, diversity=0
    )
    kinds = {h.paper_id.split("-")[1] for h in picks.hits}
    assert kinds == {"fl", "diffusion"}
    assert all(h.why.startswith("matches") for h in picks.hits)


def test_exclusion_removes_papers_with_the_term(ranker):
    base = ranker.rank(Profile(topics=("graph neural networks",)), GNN, size=50, threshold=0.0)
    picks = ranker.rank(
        Profile(topics=("graph neural networks",), excludes=("heterophily",)),
        GNN,
        size=50,
        threshold=0.0,
    )
    assert any("gnnhet" in h.paper_id for h in base.hits)
    assert not any("gnnhet" in h.paper_id for h in picks.hits)
    assert picks.excluded >= 8


def test_diversity_spreads_picks_over_subtopics(ranker):
    cands = [i for i in GNN if "gnnmol" in i or "gnnhet" in i]
    plain = ranker.rank(Profile(topics=("graph neural networks",)), cands, size=6, diversity=0.0)
    diverse = ranker.rank(Profile(topics=("graph neural networks",)), cands, size=6, diversity=0.6)

    def mean_sim(picks):
        v = ranker.index.latent[[ranker.index.pos[h.paper_id] for h in picks.hits]]
        s = v @ v.T
        return (s.sum() - np.trace(s)) / (len(v) * (len(v) - 1))

    assert mean_sim(diverse) < mean_sim(plain)
    assert {"gnnmol", "gnnhet"} <= {h.paper_id.split("-")[1] for h in diverse.hits}


def test_feedback_moves_similar_papers_up(ranker):
    het = [i for i in GNN if "gnnhet" in i]
    mol = [i for i in GNN if "gnnmol" in i]
    votes = tuple((i, 1) for i in het[:3]) + tuple((i, -1) for i in mol[:3])
    cands = het[3:] + mol[3:] + [i for i in GNN if i.startswith("syn-gnn-")]
    cold = ranker.rank(
        Profile(topics=("graph neural networks",)), cands, size=len(cands), threshold=0, diversity=0
    )
    warm = ranker.rank(
        Profile(topics=("graph neural networks",), votes=votes),
        cands,
        size=len(cands),
        threshold=0,
        diversity=0,
    )

    def mean_rank(picks, wanted):
        order = [h.paper_id for h in picks.hits]
        return np.mean([order.index(i) for i in wanted])

    assert mean_rank(warm, het[3:]) < mean_rank(cold, het[3:]) - 3
    assert mean_rank(warm, mol[3:]) > mean_rank(cold, mol[3:])
    top_het = next(h for h in warm.hits if "gnnhet" in h.paper_id)
    liked = {ranker.index.titles[ranker.index.pos[i]] for i, v in votes if v > 0}
    named = top_het.why.split("like *")[1].split("*, which you liked")[0]
    assert named in liked


def test_threshold_near_misses_and_more(ranker):
    loose = ranker.rank(Profile(topics=("diffusion models",)), ALL, size=3, threshold=0.2)
    assert len(loose.hits) == 3 and loose.more > 10
    strict = ranker.rank(Profile(topics=("diffusion models",)), ALL, size=3, threshold=0.99)
    assert len(strict.hits) <= 1 and strict.near_misses > 0


def test_followed_author_and_liked_paper(ranker):
    by = ranker.rank(Profile(authors=("Grace Hopper",)), ALL, size=5, diversity=0)
    idx = ranker.index
    assert by.hits and all("grace hopper" in idx.authors[idx.pos[h.paper_id]] for h in by.hits)
    assert by.hits[0].why == "by Grace Hopper, whom you follow"
    like = ranker.rank(Profile(likes=("syn-rl-0",)), ALL, size=5, threshold=0.1, diversity=0)
    assert "syn-rl-0" not in [h.paper_id for h in like.hits]
    assert topic_share([h.paper_id for h in like.hits], "syn-rl-") >= 0.8


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("", "Type a topic"),
        ("   \t", "Type a topic"),
        ("the and of with", "No papers match"),
        ("!!! ??? ...", "No papers match"),
        ("图神经网络", "No paper mentions '图神经网络'"),
        ("xyzzyplugh", "No paper mentions 'xyzzyplugh'."),
    ],
)
def test_bad_queries_get_a_clear_answer(ranker, query, message):
    result = ranker.search(query)
    assert result.hits == () and message in result.message


def test_huge_query_is_answered_with_finite_scores(ranker):
    result = ranker.search("sparse autoencoders " * 6000)  # ~120 KB
    assert result.hits and all(math.isfinite(h.score) for h in result.hits)
    picks = ranker.rank(Profile(topics=("x" * 100_000, "diffusion models")), ALL, size=3)
    assert all(math.isfinite(h.score) for h in picks.hits)


def test_empty_profile_or_unknown_candidates_pick_nothing(ranker):
    assert ranker.rank(Profile(), ALL).hits == ()
    assert ranker.rank(Profile(topics=("graphs",)), ["nope"]).hits == ()


def test_added_documents_are_searchable_without_refit():
    recs = synthetic_records(per_topic=10)
    index = build_index([doc_input(r) for r in recs])
    from digest.index.lifecycle import DocInput

    new = DocInput(
        "new-1",
        "Message passing for molecule graphs",
        "Graph neural networks with message passing.",
    )
    grown = add_documents(index, [new])
    assert len(index) == len(recs) and "new-1" not in index.pos  # the old index is untouched
    assert (
        grown.fitted_docs == len(recs) and len(grown) == len(recs) + 1 and not grown.needs_refit()
    )
    assert "new-1" in top_ids(Ranker(grown), "message passing molecule", k=3)


def test_index_cache_is_reused_and_extended(sqlite_store, tmp_path, monkeypatch):
    sqlite_store.papers.upsert(synthetic_records(per_topic=10))
    IndexStore(sqlite_store, tmp_path).current()

    def no_refit(*a, **k):
        raise AssertionError("the cached index should have been reused")

    monkeypatch.setattr("digest.index.lifecycle.build_index", no_refit)
    fresh = IndexStore(sqlite_store, tmp_path)
    assert len(fresh.current()) == sqlite_store.papers.count() == 76
    extra = [r for r in synthetic_records(per_topic=11) if r.id.endswith("-10")]
    assert sqlite_store.papers.upsert(extra).added == 6
    index = fresh.current()
    assert len(index) == 82 and index.fitted_docs == 76 and "syn-fl-10" in index.pos
