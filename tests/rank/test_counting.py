"""The batched term counter gives exactly the terms of the per-text analyzer, on tricky text.

Breaks that turn these red (tried): dropping the phrase slot after a word (phrases missing);
letting a phrase span the paper separator (a phrase of one title's last and the next's first
word); forgetting compounds or putting them before the paper's other terms (vocabulary order);
treating a conjunction as a stop word that joins a phrase; `compounds` starting a match one
character late after a double hyphen; the character-class plural-acronym pattern matching
inside a word ('aCNNs').
"""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from digest.rank import analyzer, counting
from digest.rank.analyzer import COMPOUND, configure, phrase_terms
from digest.rank.counting import count_chunk, surface_forms
from digest.rank.scan import _SCAN, SEP, compounds, scan
from tests.support.corpus import synthetic_records

TRICKY = [
    "Out-of-distribution detection for state-of-the-art LLMs (large language models).",
    'CNNs, GNNs and RNNs: a survey; SAEs vs. VAEs [2]! "Quoted" words?',
    "Ünïcödé naïve café résumé — 日本語 テキスト and Ελληνικά λέξεις",
    "LaTeX: $\\mathcal{O}(n^2)$ bounds on $W_{QK}$ and \\emph{sparse} autoencoders_s",
    "İstanbul ŞEHİR: the 'i̇' dotted I lower-cases to two characters",
    "a--b-c-d e-f x-y-z-w 3d-cnn-based 1-2-3 q-dm and-or-not",
    "datasets and benchmarks, datasets or benchmarks, learning on graphs",
    "_CNNs aCNNs CNNs_ X1s ABCs s",
    "",
    "   \x01 control \x01char inside",
    "Robots & robotics; series of species; indices of matrices",
]


def _reference(titles: list[str], abstracts: list[str]):
    """What the per-text analyzer gives: vocabulary in first-appearance order and counts."""
    vocab: dict[str, int] = {}
    rows = []
    for text in titles + abstracts:
        c = Counter(phrase_terms(text))
        for t in c:
            vocab.setdefault(t, len(vocab))
        rows.append(c)
    return list(vocab), rows


def _check(titles: list[str], abstracts: list[str]) -> None:
    got = count_chunk(titles, abstracts)
    terms, rows = _reference(titles, abstracts)
    assert got.terms == terms
    for i, m in enumerate((got.title, got.abstract)):
        for r in range(m.shape[0]):
            row = m.getrow(r)
            have = {got.terms[c]: int(v) for c, v in zip(row.indices, row.data, strict=True)}
            assert have == dict(rows[i * len(titles) + r])


def test_tricky_strings_count_as_the_analyzer_does():
    _check(TRICKY, list(reversed(TRICKY)))


def test_conjunction_option_is_followed():
    try:
        configure(conj_breaks_phrase=False)
        _check(TRICKY[:7], TRICKY[6:])
    finally:
        configure(conj_breaks_phrase=True)


def test_synthetic_corpus_counts_as_the_analyzer_does(monkeypatch):
    recs = synthetic_records()
    monkeypatch.setattr(counting, "BATCH", 37)  # many batches: vocabulary grows across them
    _check([r.title for r in recs], [r.abstract for r in recs])


def test_fixed_vocabulary_drops_unknown_terms():
    fitted = count_chunk(TRICKY[:3], TRICKY[:3])
    vocab = {t: i for i, t in enumerate(fitted.terms)}
    again = count_chunk(TRICKY, TRICKY, vocab=dict(vocab))
    assert again.title.shape[1] == len(vocab)
    assert (again.title[:3] != fitted.title).nnz == 0


@pytest.mark.parametrize("seed", range(5))
def test_compounds_match_the_plain_regex(seed):
    rng = random.Random(seed)
    for _ in range(2000):
        text = "".join(rng.choice("ab1--. é\x01") for _ in range(rng.randint(0, 24)))
        assert compounds(text) == [(m.start(), m.group()) for m in COMPOUND.finditer(text)]


def test_plural_acronym_pattern_equals_word_boundary_form():
    plain = re.compile(r"\b([A-Z][A-Z0-9]+)s\b")
    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice("ABs1a _-é") for _ in range(rng.randint(0, 16)))
        assert analyzer.fold(text) == plain.sub(r"\1", text).lower()


def test_surface_forms_pick_the_most_frequent_plain_word():
    titles = ["Diffusion models", "diffusion model", "Q-DM diffusion", "Models of models"]
    surface = surface_forms(titles)
    assert surface["diffusion"] == "diffusion" and surface["model"] == "models"
    assert "q-dm" not in surface.values()


def test_scan_fast_path_equals_the_regex():
    """ASCII papers skip the regex; mixed batches must give the regex's tokens all the same."""
    rng = random.Random(4)
    alphabet = "aZ9_ .,;:()[]!?\"'-\t\né—\x01\x02"
    for _ in range(3000):
        papers = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in "abc"]
        text = analyzer.fold("".join(p.replace(SEP, " ") + SEP for p in papers))
        assert scan(text) == _SCAN.findall(text)
