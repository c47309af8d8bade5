"""A hyphenated compound is one term, typed either way (an outside tester, issue 22).

Seen: `search "out of distribution"` ranked a paper on 'distribution' alone at 0.94, and
`search "out-of-distribution detection"` never said that no paper mentions 'out-of-distribution'.
Breaks that turn this red (each tried): compile_query without ``typed_apart`` (the paper that
writes 'out-of-distribution' no longer leads the spaced query); weak.check without its
hyphenated runs (no "No paper mentions 'out-of-distribution'")."""

from __future__ import annotations

from digest.rank.index import DocInput, build_index
from digest.rank.ranker import Ranker
from digest.rank.scorer import typed_apart
from digest.rank.weak import check

FILLER = " ".join(f"topic{i} method{i} result{i}" for i in range(8))
DOCS = [
    DocInput(
        "ood",
        "Detecting shifted inputs",
        f"We study out-of-distribution inputs for classifiers and calibrated rejection. {FILLER}",
    ),
    DocInput(
        "dist",
        "Heavy tails in token statistics",
        "The distribution of token frequencies, a distribution with heavy tails: each "
        f"distribution follows a power law. {FILLER}",
    ),
    DocInput("other", "Sparse probes", f"Linear probes read features from activations. {FILLER}"),
]


def test_a_compound_typed_with_spaces_finds_the_paper_that_writes_it_hyphenated():
    assert "outofdistribution" in typed_apart("out of distribution")
    assert typed_apart("graph neural networks") == ["graphneuralnetwork"]  # no word repeated
    ranker = Ranker(build_index(DOCS))
    hits = ranker.search("out of distribution").hits
    assert hits[0].paper_id == "ood" and hits[0].score > hits[1].score


def test_a_hyphenated_compound_no_paper_writes_is_named_as_missing():
    index = build_index(DOCS[1:])  # no paper says 'out-of-distribution'
    got = check(index, "out-of-distribution tokens")
    assert got.missing == ("out-of-distribution",) and "tokens" not in got.missing
    assert (
        "No paper mentions 'out-of-distribution'"
        in Ranker(index).search("out-of-distribution tokens").message
    )
    assert not check(build_index(DOCS), "out-of-distribution inputs").missing


def test_overlapping_compounds_keep_the_longest_and_read_hyphenated():
    """'state of the art' looked for 'stateofthe' and 'oftheart' too, and why-lines showed the
    glued term ('outofdistribution'). Breaks: typed_apart keeping every run papers use (the
    first assertion), why._word without the typed-apart runs (the glued word is shown)."""
    vocab = {"stateoftheart": 0, "stateofthe": 1, "oftheart": 2}
    assert typed_apart("state of the art", vocab) == ["stateoftheart"]
    why = Ranker(build_index(DOCS)).search("out of distribution").hits[0].why
    assert "out-of-distribution" in why and "outofdistribution" not in why


def test_a_hyphenated_run_of_content_words_is_not_named_missing():
    """'graph-neural-network' said "No paper mentions" it while 791 papers wrote the words apart.
    Break: weak._compound_terms without its stop-word condition."""
    assert not check(build_index(DOCS), "power-law-distribution").missing  # written apart


def test_subscribe_counts_typed_words_not_an_acronym_brought_in():
    """'neural networks' counted the papers writing 'NN' (13 on the development set), a generic
    topic made to look specific. Break: specific_matches counting every specific column."""
    docs = DOCS + [
        DocInput(
            f"nn{i}",
            f"Pruning study {i}",
            f"A neural network (NN) is pruned. The NN keeps accuracy. {FILLER}",
        )
        for i in range(3)
    ]
    ranker = Ranker(build_index(docs))
    assert ranker.specific_matches("neural networks") is None
    assert ranker.specific_matches("pruning") == 3
