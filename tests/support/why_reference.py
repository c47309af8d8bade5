"""The plain why-line code as it was before the fast path (commit ceef2c1), kept to check against.

A verbatim copy of ``contributions``, ``matched_terms``, ``distinct``, ``by_meaning`` and ``topic_why``: slow,
obviously right, and what every search page's why-lines must still read.
"""

from __future__ import annotations

import re

import numpy as np

from digest.rank.analyzer import term_of
from digest.rank.index import PaperIndex
from digest.rank.matching import _add as add_word
from digest.rank.scorer import Query, TopicState
from digest.rank.why import MEANING, _readable, quote


def contributions(index: PaperIndex, q: Query, rows: np.ndarray) -> np.ndarray:
    """Each query term's share of each row's lexical score, one binary search per column."""
    m = index.weights
    rows = np.asarray(rows, dtype=np.int64)
    out = np.zeros((len(rows), len(q.cols)), dtype=np.float32)
    starts, ends = m.indptr[q.cols].tolist(), m.indptr[q.cols + 1].tolist()
    for j, (s, e) in enumerate(zip(starts, ends, strict=True)):
        if s == e:
            continue
        seg = m.indices[s:e]
        i = np.minimum(np.searchsorted(seg, rows), e - s - 1)
        out[:, j] = np.where(seg[i] == rows, m.data[s + i] * q.weights[j], 0.0)
    return out


def matched_terms(
    index: PaperIndex, q: Query, row: int, contrib: np.ndarray, limit: int = 3
) -> list[str]:
    """The query terms adding most to the row's lexical score (phrases first), readable."""
    vocab = index.vocab
    is_phrase = np.array([" " in t for t in q.terms if t in vocab], dtype=bool)
    inv = {vocab[t]: t for t in q.terms if t in vocab}
    vals, cols = contrib.tolist(), q.cols.tolist()
    if len(is_phrase) == len(vals):
        phrase = is_phrase.tolist()
        order = sorted(range(len(vals)), key=lambda i: (not phrase[i], -vals[i]))
    else:
        order = np.argsort(-contrib).tolist()
    out: list[str] = []
    for i in order:
        if len(out) >= limit:
            break
        term = inv.get(cols[i]) if vals[i] > 0 else None
        if term is None:
            continue
        add_word(
            out, _readable(index, q, term), " ".join(q.text.lower().split())
        )  # the same rule of what repeats
    return out[:limit]


def distinct(index: PaperIndex, row: int, skip: set[str]) -> str | None:
    """The title's highest-idf phrase (x1.3) or word not in ``skip``; a word extended by the
    kept title word beside it, or None when it has none."""
    words = [w.lower() for w in re.findall(r"[^\W_]+", index.titles[row])]
    terms = [term_of(w) for w in words]
    options = [(t, w) for t, w in zip(terms, words, strict=True) if t]
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
        idf = float(index.idf[col]) * (1.3 if " " in t else 1.0)
        if idf > best_idf:
            best, best_idf = shown, idf
    if best is None or " " in best:
        return best
    # One word is never the tail: the kept title word beside it (the rarer side) joins it.
    at = next(i for i, (t, w) in enumerate(zip(terms, words, strict=True)) if w == best and t)
    kept = [
        j for j in (at - 1, at + 1) if 0 <= j < len(words) and terms[j] and terms[j] not in skip
    ]
    if not kept:
        return None

    def rarity(j: int) -> float:
        col = index.vocab.get(terms[j])
        return float(index.idf[col]) if col is not None else 0.0

    j = max(kept, key=rarity)
    return f"{words[j]} {best}" if j < at else f"{best} {words[j]}"


def by_meaning(state: TopicState, row: int, fused: float) -> bool:
    """True when meaning rather than words brought paper ``row`` for this topic."""
    lex_share = float(state.lex[row]) / max(fused, 1e-9)
    return state.dense is not None and state.dense.weight > 0 and lex_share < MEANING


def topic_why(
    index: PaperIndex, topic: str, state: TopicState, row: int, fused: float, contrib: np.ndarray
) -> str:
    """The search page's why-line for one hit, as the plain code wrote it."""
    q = state.query
    if by_meaning(state, row, fused):
        return f"close in meaning to {quote(topic, 40)}"
    terms = matched_terms(index, q, int(row), contrib)
    g = q.generic  # issue 22: words shared with the topic that are all generic are no match
    if g is not None and g.any() and not g.all() and (np.asarray(contrib)[~g] <= 0).all():
        terms = []
    base = f"matches {quote(topic, 40)}"
    skip = {s for t in q.terms for s in t.split()}
    extra = distinct(index, int(row), skip)
    tail = f"; on {extra}" if extra else ""
    if not terms:
        return f"{base} (related wording){tail}"
    return f"{base}: {', '.join(terms)}{tail}"
