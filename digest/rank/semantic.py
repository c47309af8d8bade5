"""Semantic ranking: dense paper vectors fused with the lexical score, weighted by query. No I/O."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SemanticParams:
    """How much meaning counts; judged on the four development files, cross-validated
    (``python -m bench.crossval``, docs/benchmarks.md "Four files, cross-validated")."""

    max_weight: float = 0.7  # the most meaning's share may be (words keep 0.3 of the score)
    ramp_from: int = 3  # "words": up to this many typed words a query is a keyword
    ramp_words: int = 4  # "words": words past ``ramp_from`` until meaning has its full share
    prf_docs: int = 10  # the best word matches that show what the query means here
    prf_beta: float = 2.0  # their pull on the query vector (1.0 before issue 34)
    # Which score's best papers: "hybrid" (words and LSA, issue 34) or "lexical" (words only,
    # before; paraphrases 0.659 against 0.680 with "hybrid", bench/crossval.py)
    prf_from: str = "hybrid"
    close: float = 0.45  # cosine above which a paper is 'close in meaning' to a query
    # What decides meaning's share: "words" (typed word count, above); "reach" (the share of
    # papers the query's words reach, generic ones included); "specific" (the share its specific
    # words reach: a field such as 'optimization' reaches many papers, a keyword few); "flat"
    # (how level its best lexical scores are: the top 10's mean over the best); "either" (the
    # larger of "words" and "specific"). bench/fusion.py measures them on both files.
    # "coverage" (issue 34, shipped): meaning gets the share of the typed words' weight that the
    # query's ten best matches miss (``scorer.typed_coverage``): a keyword its matches all hold
    # stays with words; a sentence whose words papers do not use leans on meaning.
    weight_by: str = "coverage"
    coverage_gain: float = 1.0  # share = min(max_weight, gain x (1 - coverage)); 1.0: not fitted
    reach_none: float = 0.01  # reaching this share of papers or fewer: a keyword, no meaning
    reach_full: float = 0.2  # reaching this share or more: a field, meaning's full share
    flat_none: float = 0.7  # top 10 at this share of the best or less: peaked, no meaning
    flat_full: float = 0.95  # this level or more: many papers match as well, full share


@dataclass(frozen=True)
class DenseState:
    """A query's corpus-wide meaning scores (about 0..1) and its weight in the fused score."""

    scores: np.ndarray
    weight: float
    has: np.ndarray | None = None  # which papers have a vector; None when all do


def query_weight(
    words: int,
    p: SemanticParams,
    reach: float | None = None,
    flat: float | None = None,
    specific: float | None = None,
    coverage: float | None = None,
) -> float:
    """Meaning's share: with ``weight_by`` "coverage", the share of the typed words' weight the
    query's best matches miss (``coverage``: their mean share held; without it, as "words");
    "words": none for keyword queries, rising with each word of a descriptive one; or with what
    the corpus says about the query (see SemanticParams)."""
    if p.weight_by == "coverage" and coverage is not None:
        return float(np.clip(p.coverage_gain * (1.0 - coverage), 0.0, p.max_weight))
    by_words = p.max_weight * min(1.0, max(0, words - p.ramp_from) / max(p.ramp_words, 1))
    if p.weight_by == "flat" and flat is not None:
        return p.max_weight * float(
            np.clip((flat - p.flat_none) / (p.flat_full - p.flat_none), 0, 1)
        )
    share = specific if p.weight_by in ("specific", "either") else reach
    if p.weight_by in ("words", "coverage") or share is None:
        return by_words
    lo, hi = np.log(p.reach_none), np.log(p.reach_full)
    by_reach = p.max_weight * float(np.clip((np.log(max(share, 1e-9)) - lo) / (hi - lo), 0, 1))
    return max(by_words, by_reach) if p.weight_by == "either" else by_reach


def top_values(v: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` largest values of ``v`` (fewer if it is shorter), unordered."""
    k = min(k, len(v))
    return v[np.argpartition(-v, k - 1)[:k]]


def unit(v: np.ndarray) -> np.ndarray:
    """``v`` scaled to length 1 (a zero vector stays zero)."""
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def dense_state(
    vectors: np.ndarray,
    has: np.ndarray,
    qvec: np.ndarray,
    lex: np.ndarray,
    words: int,
    p: SemanticParams | None = None,
    specific: float | None = None,
    coverage: float | None = None,
) -> DenseState:
    """Scores of every paper for a query vector moved towards its best lexical matches.

    Cosines are z-scored over the corpus and scaled so the best paper is 1, like the lexical
    score, so the two are on one scale; papers without a vector score 0 (lexical only).
    ``specific`` is the share of papers the query's specific words reach, ``coverage`` the
    share of the typed words' weight its best matches hold (``weight_by``); ``lex`` is the score
    whose best papers move the query vector (the word-and-LSA score of the candidates).
    """
    p = p or SemanticParams()
    q = qvec
    if p.prf_docs > 0 and lex.any():
        k = min(p.prf_docs, len(lex))
        top = np.argpartition(-lex, k - 1)[:k]  # a partial sort: a full one costs 8 ms at 100k
        top = top[has[top] & (lex[top] > 0)]
        if len(top):
            q = unit(qvec + p.prf_beta * unit(vectors[top].mean(axis=0)))
    s = vectors @ q  # one pass over the vectors: at 100k papers it is most of the cost
    full = bool(has.all())  # the usual case: no masking passes over 100k rows
    live = s if full else s[has]
    if len(live) > 1 and float(live.std()) > 0:
        s -= float(live.mean())
        s /= float(live.std())
        s /= max(float(s.max() if full else s[has].max()), 1e-9)
        np.clip(s, 0.0, 1.0, out=s)
    if not full:
        s[~has] = 0.0
    reach = float((lex > 0).mean()) if len(lex) else 0.0  # papers its words reach
    flat = None
    if p.weight_by == "flat" and lex.any():
        best = np.sort(top_values(lex, 10))[::-1]
        flat = float(best.mean() / best[0])
    w = query_weight(words, p, reach, flat, specific, coverage) if has.any() else 0.0
    return DenseState(s.astype(np.float32, copy=False), w, None if full else has)


def fuse(lexical: np.ndarray, dense: DenseState | None, rows: np.ndarray) -> np.ndarray:
    """The lexical score blended with meaning for ``rows``; rows not embedded yet keep the
    lexical score as it is, so a paper waiting for its vector ranks as it would without the extra."""
    if dense is None or dense.weight <= 0:
        return lexical
    out = (1 - dense.weight) * lexical + dense.weight * dense.scores[rows]
    if dense.has is not None:
        bare = ~dense.has[rows]
        out[bare] = lexical[bare]
    return out


def align(
    ids: list[str], vectors: dict[str, np.ndarray], dim: int
) -> tuple[np.ndarray, np.ndarray]:
    """(matrix in ``ids`` order, mask of rows that have a vector); missing rows are zeros."""
    out = np.zeros((len(ids), dim), dtype=np.float32)
    has = np.zeros(len(ids), dtype=bool)
    for i, pid in enumerate(ids):
        v = vectors.get(pid)
        if v is not None:
            out[i], has[i] = v, True
    return out, has
