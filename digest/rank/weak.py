"""Weak matches: query words no paper uses, and matches resting on a generic word alone. No I/O."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from digest.rank.analyzer import family_key, glued_terms, phrase_terms
from digest.rank.index import PaperIndex

GENERIC_SHARE = 0.1  # a word in at least this share of papers says little on its own
# ...and in at least this many: on a small corpus a share rests on a handful of papers (3 of the 19
# bundled ones use 'sparse'), too few to call a word generic. From 100 papers on, the share rules.
GENERIC_MIN_PAPERS = 10
#: Words in at least ``GENERIC_SHARE`` of 3,218 NeurIPS 2023 papers (``bench/generic_words.py``):
#: generic in any corpus of research papers, also where too few papers are stored to tell.
BACKGROUND_FILE = Path(__file__).with_name("generic_words.txt")
#: A phrase of generic words is a named topic when most papers using its rarer word use the phrase:
#: 'reinforcement' is common only as 'reinforcement learning' (0.99 of its papers), while 'neural'
#: has other uses (0.74 are 'neural network'). Chosen from bench/generic_words.py's phrase table.
NAMED_SHARE = 0.85
#: From this many papers a corpus's own counts tell a named phrase; below, the background list does.
NAMED_MIN_PAPERS = 100
NAMED_PREFIX = "phrase: "  # lines of generic_words.txt naming the development set's named phrases


@cache
def _lists() -> tuple[frozenset[str], frozenset[str]]:
    """(generic words, named phrases of generic words) from the background file, read once."""
    if not BACKGROUND_FILE.exists():
        return frozenset(), frozenset()
    lines = [
        t
        for line in BACKGROUND_FILE.read_text(encoding="utf-8").splitlines()
        if (t := line.strip()) and not t.startswith("#")
    ]
    named = frozenset(t.removeprefix(NAMED_PREFIX) for t in lines if t.startswith(NAMED_PREFIX))
    return frozenset(t for t in lines if not t.startswith(NAMED_PREFIX)), named


def background() -> frozenset[str]:
    """The background list of generic words (analyzer terms)."""
    return _lists()[0]


def named_phrases() -> frozenset[str]:
    """Phrases of generic words that name a topic in the development papers ('reinforcement learning')."""
    return _lists()[1]


def phrase_share(index: PaperIndex, term: str, col: int | None = None) -> float:
    """Of the papers using the rarer word of phrase ``term``, the share that use the phrase."""
    col = index.vocab.get(term) if col is None else col
    words = [index.vocab.get(w) for w in term.split()]
    if col is None or len(words) < 2 or None in words:
        return 0.0
    return _df(index, col) / max(min(_df(index, c) for c in words), 1)


def named_phrase(index: PaperIndex, term: str, col: int | None = None) -> bool:
    """True for a phrase that names a topic although its words are generic: most papers using its
    rarer word use the phrase (in this corpus when it is large enough, else in the background)."""
    if " " not in term:
        return False
    if len(index) >= NAMED_MIN_PAPERS:
        return phrase_share(index, term, col) >= NAMED_SHARE
    return term in named_phrases()


@dataclass(frozen=True)
class MatchCheck:
    """What a query's words find in the corpus: missing words, and whether anything specific is left."""

    missing: tuple[str, ...]  # words as typed that no paper uses
    specific: tuple[str, ...]  # words as typed that papers use and that are not generic
    suggestions: tuple[str, ...]  # corpus words close to the missing ones

    @property
    def blocked(self) -> bool:
        """True when the words papers do use are all generic: matching them is no match."""
        return bool(self.missing) and not self.specific

    def message(self, topics: list[str] | None = None) -> str:
        """'No paper mentions ...' with close terms (or the corpus's topics), '' when all are used."""
        if not self.missing:
            return ""
        words = " or ".join(f"'{w}'" for w in self.missing)
        text = f"No paper mentions {words}."
        if self.suggestions:
            text += " Close terms: " + ", ".join(self.suggestions) + "."
        elif topics:
            text += " Stored papers cover: " + ", ".join(f"'{t}'" for t in topics[:4]) + "."
        return text


def _df(index: PaperIndex, col: int) -> int:
    return int(index.weights.indptr[col + 1] - index.weights.indptr[col])


def _known(index: PaperIndex, term: str) -> int | None:
    """Column of a word or of a word of its family ('causal' answers for 'causality')."""
    if term in index.vocab:
        return index.vocab[term]
    for other in index.family.get(family_key(term), ()):
        return index.vocab.get(other)
    return None


def close_terms(index: PaperIndex, word: str, k: int = 3) -> list[str]:
    """Words papers use that are spelled like ``word`` (typos, variants); in a corpus of 50 papers
    or more only words two papers use (a word one paper has is as likely a typo of its own)."""
    df = np.diff(index.weights.indptr)
    least = 2 if len(index) >= 50 else 1
    words = {
        index.surface.get(t, t)
        for t, c in index.vocab.items()
        if " " not in t and len(t) > 2 and df[c] >= least
    }
    return difflib.get_close_matches(word, sorted(words), n=k, cutoff=0.8)


def generic_floor(n: int) -> float:
    """Papers a word must occur in to count as generic in a corpus of ``n`` papers."""
    return max(GENERIC_MIN_PAPERS, GENERIC_SHARE * n)


def generic_term(index: PaperIndex, term: str, col: int | None = None) -> bool:
    """True for a term (word or phrase) that names no topic alone: common in this corpus, or
    made only of words common in research papers at large ('neural network', 'model'), unless
    it is a named phrase ('reinforcement learning': ``named_phrase``)."""
    col = index.vocab.get(term) if col is None else col
    if named_phrase(index, term, col):
        return False
    if col is not None and _df(index, col) >= generic_floor(len(index)):
        return True
    words = background()
    return bool(words) and all(w in words for w in term.split())


def generic_columns(index: PaperIndex, cols: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    """Per query column, True when its term is generic (``generic_term``)."""
    return np.array(
        [generic_term(index, t, int(c)) for t, c in zip(names, cols, strict=True)], dtype=bool
    )


def _compounds(text: str) -> list[str]:
    """Hyphenated runs as typed ('out-of-distribution'): one term when papers write them so."""
    return re.findall(r"[^\W_]+(?:-[^\W_]+)+", text)


def _compound_terms(run: str) -> list[str]:
    """The term a hyphenated run is indexed as, when its words alone do not say it: a run with
    a stop word inside ('out-of-distribution': 'distribution' alone is another thing); [] for
    a run of content words ('graph-neural-network': papers write them apart)."""
    words = run.split("-")
    if sum(len(phrase_terms(w)) for w in words) >= len(words):
        return []  # every word counts on its own: no stop word inside
    return glued_terms(words)


def check(index: PaperIndex, text: str, suggest: bool = True) -> MatchCheck:
    """Which typed words the corpus lacks, and which of the rest are specific enough to match on
    (``suggest``: also the corpus words spelled like the missing ones, a pass over the vocabulary)."""
    missing, specific = [], []
    low = text.lower()
    for word in dict.fromkeys(re.findall(r"[^\W_]+", low) + _compounds(low)):
        terms = phrase_terms(word) if "-" not in word else _compound_terms(word)
        if len(terms) != 1:
            continue  # a stop word, or a hyphenated run that is no term of its own
        col = _known(index, terms[0])
        if col is None:
            missing.append(word)
        elif not generic_term(index, terms[0], col):
            specific.append(word)
    found = (s for w in missing for s in close_terms(index, w)) if suggest else ()
    suggestions = list(dict.fromkeys(found))
    return MatchCheck(tuple(missing), tuple(specific), tuple(suggestions[:5]))
