"""Topic relevance: hybrid lexical (BM25F) + latent (LSA with pseudo-relevance feedback) scores."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from digest.rank.analyzer import family_key, glued_terms, phrase_terms
from digest.rank.index import PaperIndex, row_means
from digest.rank.matching import Query, contributions, matched_many, matched_terms
from digest.rank.semantic import DenseState, SemanticParams, dense_state, fuse, unit
from digest.rank.weak import generic_columns, generic_term

# why.py takes them from here
__all__ = ["contributions", "matched_many", "matched_terms"]

MAX_QUERY_CHARS = 2_000  # a 100 KB query is cut: topics are phrases, not documents


@dataclass(frozen=True)
class ScoreParams:
    """Blend weights of the hybrid score (chosen on the development set)."""

    expansion_weight: float = 0.6
    expansion_spec: float = 1.0  # how hard an expansion more common than its source is discounted
    family_weight: float = 0.5  # other words of a query word's family ('causal' for 'causality')
    phrase_weight: float = 1.0
    latent_weight: float = 0.5
    prf_docs: int = 5
    prf_beta: float = 3.0
    prf_breadth: float = 0.0  # PRF pull shrinks with each query word past two (broad queries drift)
    coord: float = (
        0.0  # exponent on the share of the query a paper covers (one generic word is weak)
    )
    candidates: int = 1000
    fb_terms: int = 30  # terms borrowed from 👍 papers
    fb_term_scale: float = 0.5  # their weight relative to the channel's own words
    fb_pos: float = 2.0  # pull of the 👍 centroid in the latent space
    fb_neg: float = 0.5  # push of the 👎 centroid


def typed_apart(text: str, vocab: dict[str, int] | None = None) -> list[str]:
    """Compound terms of words typed apart that are one term when hyphenated ('out of
    distribution' -> 'outofdistribution'), for 2 to 4 words in a row. With ``vocab``: only those
    papers use, and of overlapping ones the longest ('stateoftheart', not 'stateofthe')."""
    words = re.findall(r"[^\W_]+", text.lower())
    found: list[tuple[int, int, str]] = []
    for n in (4, 3, 2):  # longest first: a run inside a kept one is not kept
        for i in range(len(words) - n + 1):
            for t in glued_terms(words[i : i + n]):
                if vocab is not None and t not in vocab:
                    continue
                if vocab is None or not any(a <= i and i + n <= b for a, b, _ in found):
                    found.append((i, i + n, t))
    return [t for _, _, t in found]


def compile_query(index: PaperIndex, text: str, p: ScoreParams | None = None) -> Query | None:
    """Weighted query terms (with acronym expansions); None when no term is in the index."""
    p = p or ScoreParams()
    text = (text or "")[:MAX_QUERY_CHARS]
    terms = phrase_terms(text)
    base = [t for t in terms if " " not in t]
    weights: Counter[str] = Counter()
    for t in terms:
        weights[t] += p.phrase_weight if " " in t else 1.0
    vocab, idf = index.vocab, index.idf
    glued = typed_apart(text, vocab)  # 'out of distribution' as papers write it, hyphenated
    for t in glued:
        if t not in weights:
            weights[t] = 1.0
    for t, source in index.acronyms.expand(base):
        if t in vocab and source in vocab:
            # A long form more common than its acronym ('neural network' for GNN) broadens the
            # query: it counts only as far as it is as specific as the word it stands for.
            spec = min(1.0, float(idf[vocab[t]] / max(idf[vocab[source]], 1e-9)))
            weights[t] = max(weights[t], p.expansion_weight * spec**p.expansion_spec)
    relative: dict[str, str] = {}  # a relative -> the query word that brought it
    if p.family_weight > 0:
        for t in base:  # exact words first, their morphological relatives at a discount
            for v in index.family.get(family_key(t), ()):
                weights[v] = max(weights[v], p.family_weight) if v not in base else weights[v]
                if v not in base:
                    relative.setdefault(v, t)
    known = [(t, c, w) for t, w in weights.items() if (c := vocab.get(t)) is not None]
    if not known:
        return None
    cols = np.array([c for _, c, _ in known], dtype=np.int64)
    w = np.array([w for _, _, w in known], dtype=np.float32)
    idf = idf[cols]
    shown: dict[str, str] = {}
    for word in re.findall(r"[^\W_]+", text.lower()):
        stems = phrase_terms(word)
        if len(stems) == 1:
            shown.setdefault(stems[0], word)
    ideal = float((w * idf).sum())
    latent = index.project(cols, w * idf)
    names = tuple(t for t, _, _ in known)  # each column's term, for the why-lines
    generic = generic_columns(index, cols, names)
    for i, name in enumerate(names):  # 'learned' for a generic 'learning' is no more telling
        if not generic[i] and (word := relative.get(name)) is not None:
            generic[i] = generic_term(index, word, vocab.get(word))
    return Query(
        text,
        tuple(weights),
        cols,
        w,
        ideal,
        latent,
        shown,
        len(set(base)),
        generic,
        {"names": names, "typed": frozenset(terms) | frozenset(glued) | frozenset(relative)},
    )


#: Whether a paper matching only a query's generic words loses its word score. Off: it cost
#: -0.008 / -0.004 nDCG@10 on the development files (bench/generic_rule.py), so such a paper
#: keeps its rank, and its why-line names no generic word (why.page_why: 'related wording').
GENERIC_RULE = False


def lexical(
    index: PaperIndex,
    q: Query,
    floor: float = 0.25,
    coord: float = 0.0,
    before_rule: list[np.ndarray] | None = None,
) -> np.ndarray:
    """BM25F score of every paper, relative to the topic's best match in the corpus (0..1).

    Calibrating per topic keeps several topics of one channel comparable; the floor (a
    fraction of a perfect match) stops a topic that matches nothing well from looking strong.
    ``before_rule`` receives the scores before papers matching only generic words lost theirs.
    """
    mass = index.idf[q.cols] * q.weights if coord > 0 else None  # coverage only when used
    raw, covered = column_scores(index.weights, q.cols, q.weights, mass)
    if coord > 0 and q.ideal > 0:
        raw = raw * (covered / q.ideal) ** coord
    scale = np.float32(max(float(raw.max(initial=0.0)), floor * q.ideal, 1e-9))
    if GENERIC_RULE and q.generic is not None and q.generic.any() and not q.generic.all():
        # 'diffusion models': a paper with 'model' alone does not match it, whatever its count.
        spec = ~q.generic
        has, _ = column_scores(index.weights, q.cols[spec], np.ones(int(spec.sum()), np.float32))
        if has.any():  # else the specific words are in no paper: the generic ones are all there is
            if before_rule is not None:
                before_rule.append(raw / scale)
            raw[has <= 0] = 0.0
            scale = np.float32(max(float(raw.max(initial=0.0)), floor * q.ideal, 1e-9))
    raw /= scale
    return raw


def column_scores(
    m: sparse.csc_matrix, cols: np.ndarray, weights: np.ndarray, mass: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(``m[:, cols] @ weights``, per row the summed ``mass`` of the columns it has), from CSC arrays."""
    starts, ends = m.indptr[cols], m.indptr[cols + 1]
    n = m.shape[0]
    if not len(cols) or not (ends - starts).any():
        return np.zeros(n, dtype=np.float32), np.zeros(n, dtype=np.float32)
    rows = np.concatenate([m.indices[s:e] for s, e in zip(starts, ends, strict=True)])
    vals = np.concatenate([m.data[s:e] * w for s, e, w in zip(starts, ends, weights, strict=True)])
    score = np.bincount(rows, weights=vals, minlength=n).astype(np.float32)
    if mass is None:
        return score, score
    have = np.repeat(np.asarray(mass, dtype=np.float32), ends - starts)
    return score, np.bincount(rows, weights=have, minlength=n).astype(np.float32)


def latent_direction(
    index: PaperIndex, q: Query, lex: np.ndarray, p: ScoreParams, cands: np.ndarray | None = None
) -> np.ndarray:
    """The query's latent vector moved towards its best lexical matches (Rocchio-style PRF)."""
    if p.prf_docs <= 0 or not (lex[cands] if cands is not None else lex).any():
        return q.latent  # no match at all (candidates hold every matching paper, or the best)
    top = _top_among(lex, cands, p.prf_docs) if cands is not None else None
    top = top_rows(lex, p.prf_docs) if top is None else top
    centroid = unit((lex[top, None] * index.latent[top]).sum(axis=0))
    beta = p.prf_beta / (1 + p.prf_breadth * max(0, q.words - 2))
    return unit(q.latent + beta * centroid).astype(np.float32)


@dataclass(frozen=True)
class TopicState:
    """A topic's corpus-wide lexical scores and PRF direction: computed once, reused per channel."""

    query: Query
    lex: np.ndarray
    direction: np.ndarray
    dense: DenseState | None = None  # meaning, when the semantic extra embedded the papers
    candidates: np.ndarray | None = None  # the best lexical matches, as ``score`` takes them


def topic_state(
    index: PaperIndex,
    q: Query,
    p: ScoreParams | None = None,
    qvec: np.ndarray | None = None,
    sp: SemanticParams | None = None,
) -> TopicState:
    """Everything about ``q`` that does not depend on which papers are being ranked."""
    p = p or ScoreParams()
    before: list[np.ndarray] = []
    lex = lexical(index, q, coord=p.coord, before_rule=before)
    dense = None
    if qvec is not None and index.dense is not None and index.has_dense is not None:
        spec = specific_reach(index, q) if sp and sp.weight_by in ("specific", "either") else None
        dense = dense_state(index.dense, index.has_dense, qvec, lex, q.words, sp, spec)
    # Papers with only the generic words stay candidates after every specific match: their
    # meaning (LSA) can still bring them, as 'related wording', never as a word match.
    pick = lex + np.float32(1e-3) * before[0] if before else lex
    cands = _candidates(pick, p.candidates)  # once: the PRF's best few are among them
    return TopicState(q, lex, latent_direction(index, q, lex, p, cands), dense, cands)


def specific_reach(index: PaperIndex, q: Query) -> float:
    """The share of papers holding one of the query's specific words (all its words if none is)."""
    cols = q.cols
    if q.generic is not None and not q.generic.all():
        cols = cols[~q.generic]
    has, _ = column_scores(index.weights, cols, np.ones(len(cols), dtype=np.float32))
    return float((has > 0).mean()) if len(has) else 0.0


def score(
    index: PaperIndex,
    q: Query | TopicState,
    rows: np.ndarray | None = None,
    p: ScoreParams | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(rows, hybrid relevance in about 0..1) for papers ``rows``, or for the best candidates.

    The latent part is only computed for candidates: a dense scan of 100k papers per query
    would cost more than the whole latency budget, and the lexical pass finds the candidates.
    """
    p = p or ScoreParams()
    state = q if isinstance(q, TopicState) else topic_state(index, q, p)
    if rows is None:
        rows = state.candidates
        if rows is None:
            rows = _candidates(state.lex, p.candidates)
        if state.dense is not None and state.dense.weight > 0:  # meaning finds papers words miss
            rows = np.union1d(rows, _candidates(state.dense.scores, p.candidates))
    sim = np.clip(index.latent[rows] @ state.direction, 0.0, 1.0)
    hybrid = (1 - p.latent_weight) * state.lex[rows] + p.latent_weight * sim
    return rows, fuse(hybrid, state.dense, rows)


def _candidates(lex: np.ndarray, k: int) -> np.ndarray:
    """Rows of the ``k`` best lexical matches (every match when the corpus is small)."""
    if len(lex) <= k:
        # Matches only, as in a large corpus: with every row a candidate, a store of fewer than
        # ``k`` papers listed ones without the query's words, by LSA alone ('related wording').
        return np.flatnonzero(lex)
    return top_rows(lex, k)


def _top_among(scores: np.ndarray, cands: np.ndarray, k: int) -> np.ndarray | None:
    """``top_rows(scores, k)`` (k <= 16) found among ``cands``; None if a tie at the cut-off
    leaves it unsure that every row at least as good is a candidate."""
    if k > 16:
        return None
    c = cands[scores[cands] > 0]
    if len(c) > k:  # the k-th best value; rows tied with it are all kept, then ordered
        c = c[scores[c] >= np.partition(scores[c], len(c) - k)[len(c) - k]]
    top = c[np.lexsort((c, -scores[c]))[:k]]  # best first, ties by row: argmax's order
    if len(cands) < len(scores) and len(top) and scores[top[-1]] <= scores[cands].min():
        return None
    return top


def top_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """Rows of the ``k`` highest positive scores, unordered; selects among non-zeros only."""
    if k <= 16:  # a few argmax passes beat a partition of the whole array
        work, out = scores.copy(), []
        for _ in range(min(k, len(work))):
            i = int(np.argmax(work))
            if work[i] <= 0:
                break
            out.append(i)
            work[i] = -np.inf
        return np.array(out, dtype=np.int64)
    nz = np.flatnonzero(scores != 0)  # 9x faster than nonzero() of a float array, same rows
    if len(nz) <= k:
        return nz
    return nz[np.argpartition(-scores[nz], k - 1)[:k]]


def refine(
    index: PaperIndex,
    base: TopicState | None,
    pos: list[int],
    neg: list[int],
    p: ScoreParams | None = None,
    liked_mean: np.ndarray | None = None,
) -> TopicState | None:
    """Rocchio relevance feedback: a topic (or none) moved towards 👍 papers and away from 👎 ones.

    This is the channel's learned linear model: term weights borrowed from liked papers and a
    latent direction from the liked/disliked centroids, over the same features as the topic score.
    """
    p = p or ScoreParams()
    if not pos and not neg:
        return base
    cols = base.query.cols if base else np.zeros(0, dtype=np.int64)
    weights = base.query.weights if base else np.zeros(0, dtype=np.float32)
    if pos:
        borrowed = (row_means(index.weights, [pos])[0] if liked_mean is None else liked_mean).copy()
        borrowed[cols] = 0
        k = min(p.fb_terms, len(borrowed))
        extra = np.argpartition(-borrowed, k - 1)[:k]
        extra = extra[borrowed[extra] > 0]
        scale = p.fb_term_scale / max(float(borrowed[extra].max(initial=0.0)), 1e-9)
        cols = np.concatenate([cols, extra])
        weights = np.concatenate([weights, (borrowed[extra] * scale).astype(np.float32)])
    if not len(cols):
        return base
    idf = index.idf[cols]
    generic = None
    if base is not None and base.query.generic is not None:  # borrowed words count as specific
        generic = np.zeros(len(cols), dtype=bool)
        generic[: len(base.query.generic)] = base.query.generic
    query = Query(
        base.query.text if base else "",
        (),
        cols,
        weights,
        float((weights * idf).sum()),
        base.query.latent if base else index.project(cols, weights * idf),
        generic=generic,
    )
    direction = base.direction.copy() if base else query.latent.copy()
    if pos:
        direction = direction + p.fb_pos * unit(index.latent[pos].mean(axis=0))
    if neg:
        direction = direction - p.fb_neg * unit(index.latent[neg].mean(axis=0))
    dense = base.dense if base else None
    return TopicState(query, lexical(index, query), unit(direction).astype(np.float32), dense)
