"""Learning from a channel's 👍/👎: its topic moved towards liked papers and away from disliked ones.

Measured through the real path (votes stored, digest composed as delivered) by
`python -m bench.feedback`; docs/benchmarks.md lists what was tried and what lost. No I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from digest.rank.index import PaperIndex
from digest.rank.scorer import ScoreParams, TopicState, refine
from digest.rank.semantic import DenseState, unit


@dataclass(frozen=True)
class FeedbackParams:
    """How votes move a topic; chosen on both development query files (docs/benchmarks.md)."""

    terms: int = 30  # words borrowed from 👍 papers
    term_scale: float = 0.25  # their weight next to the channel's own words (1.0 = as strong)
    latent_pos: float = 2.0  # pull of the 👍 centroid in the LSA space
    latent_neg: float = 0.5  # push of the 👎 centroid
    dense_neg: float = 0.3  # push of the 👎 centroid in the sentence-embedding space
    diversity_half: float = 5.0  # votes after which a digest diversifies half as much


PARAMS = FeedbackParams()  # the setting in force (bench/feedback_ablation.py swaps it)


def learn(
    index: PaperIndex,
    base: TopicState | None,
    pos: list[int],
    neg: list[int],
    score_params: ScoreParams | None = None,
    fp: FeedbackParams | None = None,
) -> TopicState | None:
    """``base`` (or no topic) refined by votes: Rocchio in words, in LSA and in meaning."""
    fp = fp or PARAMS
    sp = replace(
        score_params or ScoreParams(),
        fb_terms=fp.terms,
        fb_term_scale=fp.term_scale,
        fb_pos=fp.latent_pos,
        fb_neg=fp.latent_neg,
    )
    state = refine(index, base, pos, neg, sp)
    if state is None or not pos or state.dense is None or index.dense is None:
        return state
    has = index.has_dense if index.has_dense is not None else np.ones(len(index), dtype=bool)
    return replace(state, dense=_dense_rocchio(index.dense, has, state.dense, pos, neg, fp))


def _dense_rocchio(
    vectors: np.ndarray,
    has: np.ndarray,
    dense: DenseState,
    pos: list[int],
    neg: list[int],
    fp: FeedbackParams,
) -> DenseState:
    """Meaning scores averaged with closeness to the 👍 centroid (minus the 👎 one), same 0..1 scale.

    Only the share meaning already has for this topic is used: for keyword topics it is 0, and
    a pull in meaning space there lowered day-2 nDCG (words decide what a keyword means). Papers
    not embedded yet keep their score (0) and do not count in the centroids.
    """
    pos, neg = [r for r in pos if has[r]], [r for r in neg if has[r]]
    if dense.weight <= 0 or not pos:
        return dense
    direction = unit(vectors[pos].mean(axis=0))
    if neg:
        direction = direction - fp.dense_neg * unit(vectors[neg].mean(axis=0))
    s = vectors @ unit(direction)
    live = s[has]
    s = (s - float(live.mean())) / max(float(live.std()), 1e-9)
    s = np.clip(s / max(float(s[has].max()), 1e-9), 0.0, 1.0)
    s[~has] = 0.0
    # replace(), not a new DenseState: papers without a vector must keep their plain lexical score
    return replace(dense, scores=((dense.scores + s) / 2).astype(np.float32))


def diversity(base: float, votes: int, fp: FeedbackParams | None = None) -> float:
    """The MMR weight for a channel with ``votes`` votes: diversity hedges while its taste is unknown.

    A digest for a topic nobody has voted on spreads over the topic's senses; each vote says
    which sense the channel means, so the hedge shrinks (5 votes: half, 20 votes: a fifth).
    """
    fp = fp or PARAMS
    return base * fp.diversity_half / (fp.diversity_half + max(votes, 0))
