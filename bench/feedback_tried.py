"""Learners measured against the shipped one in bench/feedback_ablation.py and not kept.

Each takes the shipped learner (``feedback.learn``'s signature) and the same arguments, so the
ablation installs it in place of ``feedback.learn`` and every day-2 digest is composed through
`ChannelService.preview` as delivered. docs/benchmarks.md gives their figures.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial

import numpy as np
from sklearn.linear_model import LogisticRegression

from digest.rank import feedback
from digest.rank.analyzer import phrase_terms
from digest.rank.index import row_means
from digest.rank.scorer import ScoreParams, column_scores, refine, score
from digest.rank.semantic import unit

ALL = ("topic words", "topic LSA", "👍 centroid", "👎 centroid", "title", "coverage", "phrases")


def _loo_closeness(index, rows: np.ndarray, group: list[int]) -> np.ndarray:
    """LSA closeness of each row to the centroid of ``group``, a member left out of its own."""
    if not group:
        return np.zeros(len(rows))
    lat = index.latent[rows].astype(np.float64)
    s = index.latent[group].sum(axis=0)[None, :] - np.isin(rows, group)[:, None] * lat
    n = np.linalg.norm(s, axis=1)
    return np.where(n > 1e-6, np.einsum("ij,ij->i", lat, s) / np.maximum(n, 1e-9), 0.0)


def _title_share(index, base, rows: np.ndarray) -> np.ndarray:
    """Share of the topic's own word mass (weight x idf) found in each row's title."""
    q = base.query
    mass = dict(zip(q.cols.tolist(), (q.weights * index.idf[q.cols]).tolist(), strict=True))
    total = max(sum(mass.values()), 1e-9)
    out = np.zeros(len(rows))
    for i, r in enumerate(rows):
        cols = {index.vocab.get(t) for t in phrase_terms(index.titles[r])}
        out[i] = sum(m for c, m in mass.items() if c in cols) / total
    return out


def _coverage(index, base, rows: np.ndarray, phrases: bool) -> np.ndarray:
    """Share of the topic's word mass (only its phrases, if ``phrases``) each row contains."""
    q = base.query
    inv = {c: t for t, c in index.vocab.items() if c in set(q.cols.tolist())}
    keep = np.array([(" " in inv[int(c)]) or not phrases for c in q.cols])
    if not keep.any():
        return np.zeros(len(rows))
    mass = index.idf[q.cols[keep]] * q.weights[keep]
    _, have = column_scores(index.weights, q.cols[keep], q.weights[keep], mass)
    return have[rows] / max(float(mass.sum()), 1e-9)


def features(index, base, pos, neg, rows: np.ndarray, which: tuple[str, ...]) -> np.ndarray:
    """Per row the named features (the plain topic's scores, closeness to the votes, matches)."""
    get = {
        "topic words": lambda: base.lex[rows],
        "topic LSA": lambda: np.clip(index.latent[rows] @ base.direction, 0, 1),
        "👍 centroid": lambda: _loo_closeness(index, rows, pos),
        "👎 centroid": lambda: _loo_closeness(index, rows, neg),
        "title": lambda: _title_share(index, base, rows),
        "coverage": lambda: _coverage(index, base, rows, False),
        "phrases": lambda: _coverage(index, base, rows, True),
    }
    return np.stack([np.asarray(get[k](), dtype=np.float64) for k in which], axis=1)


def ltr(
    shipped, index, base, pos, neg, score_params=None, fp=None, which=ALL, c=0.1, lam=0.5, k=50
):
    """The shipped learner's top ``k`` reranked by a logistic 👍 vs 👎 fitted on the voted papers.

    Few features, strong L2 (C); the logistic's z-scored output is added to the shipped score at
    ``lam`` times the spread of that score over the top, so the shipped order is the prior.
    """
    state = shipped(index, base, pos, neg, score_params, fp)
    if base is None or state is None or len(pos) < 2 or len(neg) < 2:
        return state
    rows, h = score(index, state, None, ScoreParams())
    voted = np.array(pos + neg)
    top = rows[np.argsort(-h, kind="stable")[: k + len(voted)]]
    x = features(index, base, pos, neg, np.concatenate([top, voted]), which)
    z = (x - x[: len(top)].mean(axis=0)) / (x[: len(top)].std(axis=0) + 1e-6)
    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    dec = LogisticRegression(C=c).fit(z[len(top) :], y).decision_function(z[: len(top)])
    spread = float(score(index, state, top, ScoreParams())[1].std())
    lex = state.lex.copy()  # the hybrid score is half the word score: twice the shift there
    lex[top] += (2 * lam * spread * (dec - dec.mean()) / (dec.std() + 1e-9)).astype(np.float32)
    return replace(state, lex=lex)


def pull_schedule(shipped, index, base, pos, neg, score_params=None, fp=None, half=5.0, pull=2.5):
    """The LSA pull and push grown with the votes: ``pull`` x n / (n + half), push likewise."""
    fp = fp or feedback.PARAMS
    g = (len(pos) + len(neg)) / (len(pos) + len(neg) + half)
    fp = replace(fp, latent_pos=pull * g, latent_neg=fp.latent_neg * g)
    return shipped(index, base, pos, neg, score_params, fp)


def rocchio_gamma(shipped, index, base, pos, neg, score_params=None, fp=None, gamma=0.5):
    """Borrowed words chosen by the 👍 mean row minus ``gamma`` x the 👎 mean row."""
    fp = fp or feedback.PARAMS
    if not pos or not neg:
        return shipped(index, base, pos, neg, score_params, fp)
    sp = replace(
        score_params or ScoreParams(),
        fb_terms=fp.terms,
        fb_term_scale=fp.term_scale,
        fb_pos=fp.latent_pos,
        fb_neg=fp.latent_neg,
    )
    liked, disliked = row_means(index.weights, [pos, neg])
    mix = np.clip(liked - gamma * disliked, 0.0, None).astype(np.float32)
    state = refine(index, base, pos, neg, sp, liked_mean=mix)
    if fp.neg_terms > 0 and fp.neg_scale > 0:
        state = replace(state, lex=feedback._disliked_words(index, state, liked, disliked, fp))
    return state


def prf_docs(shipped, index, base, pos, neg, score_params=None, fp=None, docs=10):
    """Once a channel has 👎 papers, the PRF (which skips them) takes ``docs`` best matches."""
    sp = replace(score_params or ScoreParams(), prf_docs=docs)
    return shipped(index, base, pos, neg, sp, fp)


def no_prf(shipped, index, base, pos, neg, score_params=None, fp=None):
    """Votes replace the topic's pseudo-relevance feedback: the pull starts from its own words."""
    if base is not None and pos:
        base = replace(base, direction=unit(base.query.latent).astype(np.float32))
        fp = replace(fp or feedback.PARAMS, prf_skips_disliked=False)  # no PRF left to redo
    return shipped(index, base, pos, neg, score_params, fp)


TRIED: dict[str, Callable] = {
    "rerank top 50 by a logistic on 7 features (λ 0.5)": partial(ltr),
    "rerank top 50 by a logistic on 4 scores (λ 0.5)": partial(ltr, which=ALL[:4]),
    "rerank top 50 by a logistic on title/coverage/phrases (λ 0.5)": partial(ltr, which=ALL[4:]),
    "LSA pull 2.5 × n/(n+5), push likewise": partial(pull_schedule),
    "LSA pull 4 × n/(n+20), push likewise": partial(pull_schedule, half=20.0, pull=4.0),
    "borrowed words: 👍 mean − 0.5 × 👎 mean": partial(rocchio_gamma),
    "PRF from the 10 best non-👎 matches (5 kept)": partial(prf_docs),
    "no PRF once voted (pull from the topic's own words)": partial(no_prf),
}
