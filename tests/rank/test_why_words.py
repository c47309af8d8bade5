"""Why-lines name words people write: never a stem ('physic') or a glued compound.

Breaks that turn this red (each tried, then restored): `why._word` returning the index term
as it is (the why-line reads 'physic'); `_word` skipping the typed compound (a paper on
'out-of-distribution' reads 'outofdistribution').
"""

from __future__ import annotations

import re

import pytest

from digest.rank.index import DocInput, build_index
from digest.rank.ranker import Ranker


def _ranker() -> Ranker:
    docs = [
        DocInput("p1", "Physics of layered models", "We study physics priors for robotics."),
        DocInput("p2", "Out-of-distribution detection", "Robust out-of-distribution detection."),
        DocInput("p3", "Sparse coding", "Dictionaries for images."),
        DocInput("p4", "Graph search", "Shortest paths on graphs."),
    ]
    return Ranker(build_index(docs))


def _named(why: str) -> list[str]:
    m = re.search(r"matches '[^']*': ([^;]+)", why)
    return [w.strip() for w in m.group(1).split(",")] if m else []


def test_named_words_are_words_from_the_query_or_the_paper():
    ranker = _ranker()
    for query in ("physics robotics", "out-of-distribution detection"):
        result = ranker.search(query)
        worded = [h for h in result.hits if _named(h.why)]
        assert worded, result.hits
        for hit in worded:
            named = _named(hit.why)
            pos = ranker.index.pos[hit.paper_id]
            text = f"{query} {ranker.index.titles[pos]}".lower()
            for w in named:
                assert w in text and re.search(rf"\b{re.escape(w)}\b", text), (w, hit.why)
            assert "physic," not in hit.why + "," and "outofdistribution" not in hit.why


@pytest.mark.parametrize(
    ("have", "shown", "typed", "want"),
    [
        (["graph neural"], "neural networks", "graph neural networks", ["graph neural networks"]),
        (["neural networks"], "graph neural", "graph neural networks", ["graph neural networks"]),
        (["modelling"], "modeling", "modelling", ["modelling"]),
        (["learning"], "learned", "federated learning", ["learning"]),
        (
            ["graph neural"],
            "neural networks",
            "neural networks on graph neural",
            ["graph neural", "neural networks"],
        ),
        (
            ["sparse autoencoder", "sae"],
            "models",
            "sparse autoencoder models",
            ["sparse autoencoder", "sae", "models"],
        ),
    ],
)
def test_a_why_line_never_names_a_word_twice(have, shown, typed, want):
    """An outside tester read "graph neural, neural networks, gnn" and "modelling, modeling,
    models" (183 and 115 of 1,276 why-lines on the development set). Breaks that turn this red:
    matching._add without its phrase merge, or without its word-family check."""
    from digest.rank.matching import _add

    out = list(have)
    _add(out, shown, typed)
    assert out == want
