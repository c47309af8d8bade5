"""Why-lines: the words a paper shares with a topic, what sets it apart, and when meaning brought it."""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from digest.rank.analyzer import term_of
from digest.rank.index import PaperIndex
from digest.rank.scorer import Query, TopicState, matched_terms

MEANING = 0.3  # below this lexical share of the fused score, meaning rather than words brought it


def quote(text: str, limit: int = 60) -> str:
    """'text', shortened with an ellipsis past ``limit`` characters."""
    text = " ".join(text.split())
    return f"'{text[:limit]}…'" if len(text) > limit else f"'{text}'"


@lru_cache(maxsize=4096)
def _span(text: str, phrase: str, gap: int = 2) -> str | None:
    """``phrase`` ('learning human') as written in ``text``, stop words included, if it is there."""
    a, _, b = phrase.partition(" ")
    pat = rf"\b{re.escape(a)}\w*(?:\W+\w+){{0,{gap}}}?\W+{re.escape(b)}\w*"
    m = re.search(pat, text.lower())
    return m.group(0) if m else None


def _readable(index: PaperIndex, q: Query, term: str) -> str:
    """A matched term in words: the user's own phrase where they typed one, else the corpus's form."""
    if " " in term:
        span = _span(q.text, " ".join(q.shown.get(s, s) for s in term.split()))
        if span:
            return span
    return term  # the singular, which the paper has (alone or as the start of its plural)


def distinct(index: PaperIndex, row: int, skip: set[str]) -> str | None:
    """The title's most specific phrase (or word) beyond the topic's: what sets this paper apart."""
    words = [w.lower() for w in re.findall(r"[^\W_]+", index.titles[row])]
    terms = [term_of(w) for w in words]
    options = [(t, w) for t, w in zip(terms, words, strict=True) if t]
    # A phrase must stand in the title as two adjacent words.
    options += [
        (f"{a} {b}", f"{words[i]} {words[i + 1]}")
        for i, (a, b) in enumerate(zip(terms, terms[1:], strict=False))
        if a and b
    ]
    best, best_idf = None, 0.0
    for t, shown in options:
        col = index.vocab.get(t)
        if col is None or set(t.split()) & skip:
            continue
        idf = float(index.idf[col]) * (1.3 if " " in t else 1.0)  # a phrase says more
        if idf > best_idf:
            best, best_idf = shown, idf
    return best


def topic_why(
    index: PaperIndex,
    topic: str,
    state: TopicState,
    row: int,
    fused: float,
    contrib: np.ndarray | None = None,
) -> str:
    """'matches 'topic': words; also: title phrase', or 'close in meaning to 'topic'' when it was."""
    q = state.query
    lex_share = float(state.lex[row]) / max(fused, 1e-9)
    meaning = state.dense is not None and state.dense.weight > 0 and lex_share < MEANING
    if meaning:
        return f"close in meaning to {quote(topic, 40)}"
    terms = matched_terms(
        index, q, int(row), render=lambda t: _readable(index, q, t), contrib=contrib
    )
    base = f"matches {quote(topic, 40)}"
    if not terms:
        return f"{base} (related wording)"
    skip = {s for t in q.terms for s in t.split()}
    extra = distinct(index, int(row), skip)
    tail = f"; on {extra}" if extra else ""
    return f"{base}: {', '.join(terms)}{tail}"
