"""Learning from a channel's 👍/👎: its topic moved towards liked papers and away from disliked ones.

Measured through the real path (votes stored, digest composed as delivered) by
`python -m bench.feedback`; docs/benchmarks.md lists what was tried and what lost. No I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from digest.rank.index import PaperIndex, row_means
from digest.rank.scorer import (
    ScoreParams,
    TopicState,
    column_scores,
    latent_direction,
    refine,
)
from digest.rank.semantic import DenseState, unit


@dataclass(frozen=True)
class FeedbackParams:
    """How votes move a topic; chosen on both development query files (docs/benchmarks.md)."""

    terms: int = 30  # words borrowed from 👍 papers
    term_scale: float = 0.25  # their weight next to the channel's own words (1.0 = as strong)
    latent_pos: float = 2.0  # pull of the 👍 centroid in the LSA space
    latent_neg: float = 0.5  # push of the 👎 centroid
    neg_terms: int = 10  # words typical of 👎 papers (beyond 👍 ones) that count against a paper
    neg_scale: float = 0.3  # their weight, as a share of the word score's 0..1 range
    dense_neg: float = 0.3  # push of the 👎 centroid in the sentence-embedding space
    dense_mix: float = 0.5  # share of closeness to the 👍 centroid in a topic's meaning score
    diversity_half: float = 0.0  # votes after which it diversifies half as much; 0: none once voted
    prf_skips_disliked: bool = True  # the topic's pseudo-relevance feedback ignores 👎 papers
    # Votes until the above move a topic as far as they can; fewer move it proportionally less
    # (a few votes are a noisy sample of what a channel wants): at 5 votes the lift on keyword
    # topics went from -0.006 to +0.006 (bench/feedback_votes.py). 0: full strength from one vote.
    full_at: int = 10


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
    full = fp or PARAMS
    fp = ramped(full, len(pos) + len(neg))
    sp = replace(
        score_params or ScoreParams(),
        fb_terms=fp.terms,
        fb_term_scale=fp.term_scale,
        fb_pos=fp.latent_pos,
        fb_neg=fp.latent_neg,
    )
    if base is not None and neg and fp.prf_skips_disliked:
        base = _without_disliked(index, base, neg, sp)
    # The voted rows are read once: each read of a row walks the whole index (docs: re-rank).
    liked, disliked = row_means(index.weights, [pos, neg]) if pos else (None, None)
    state = refine(index, base, pos, neg, sp, liked_mean=liked)
    if state is None or not pos:
        return state
    if neg and fp.neg_terms > 0 and fp.neg_scale > 0:
        state = replace(state, lex=_disliked_words(index, state, liked, disliked, fp))
    if index.dense is None:
        return state
    has = index.has_dense if index.has_dense is not None else np.ones(len(index), dtype=bool)
    if base is None:  # a taste of liked papers and votes alone: meaning has the share it has
        return replace(state, dense=_dense_taste(index.dense, has, pos, neg, fp, full.dense_mix))
    if state.dense is None:
        return state
    return replace(state, dense=_dense_rocchio(index.dense, has, state.dense, pos, neg, fp))


def ramped(fp: FeedbackParams, votes: int) -> FeedbackParams:
    """``fp`` with every pull and push scaled by ``votes / full_at`` (at most 1)."""
    if fp.full_at <= 0 or votes >= fp.full_at:
        return fp
    s = max(votes, 0) / fp.full_at
    return replace(
        fp,
        term_scale=fp.term_scale * s,
        latent_pos=fp.latent_pos * s,
        latent_neg=fp.latent_neg * s,
        neg_scale=fp.neg_scale * s,
        dense_neg=fp.dense_neg * s,
        dense_mix=fp.dense_mix * s,
    )


def _without_disliked(
    index: PaperIndex, base: TopicState, neg: list[int], sp: ScoreParams
) -> TopicState:
    """``base`` with its pseudo-relevance feedback taken from its best matches that were not 👎.

    The topic's direction leans towards its few best word matches, assumed relevant; a 👎 on one
    of them says it is not, so the direction no longer leans on it (the LSA push then moves away
    from the 👎 papers as a whole).
    """
    lex = base.lex.copy()
    lex[neg] = 0.0
    return replace(base, direction=latent_direction(index, base.query, lex, sp, base.candidates))


def _disliked_words(
    index: PaperIndex,
    state: TopicState,
    liked: np.ndarray,
    disliked: np.ndarray,
    fp: FeedbackParams,
) -> np.ndarray:
    """The word score minus a match on the words 👎 papers use more than 👍 ones.

    The LSA push moves the topic's direction away from the 👎 centroid as a whole; these words
    name what the channel turned down ('zero-shot' under a few-shot topic) and cost a paper that
    uses them, whatever else it matches. The topic's own and borrowed words never count against.
    """
    d = disliked - liked  # mean rows of the 👎 and the 👍 papers
    d[state.query.cols] = 0
    cols = np.argsort(-d)[: fp.neg_terms]
    cols = cols[d[cols] > 0]
    raw, _ = column_scores(index.weights, cols.astype(np.int64), d[cols].astype(np.float32))
    penalty = fp.neg_scale * raw / max(float(raw.max(initial=0.0)), 1e-9)
    return np.clip(state.lex - penalty, 0.0, None).astype(np.float32)


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
    if dense.weight <= 0 or not [r for r in pos if has[r]]:
        return dense
    s = _closeness(vectors, has, pos, neg, fp)
    # replace(), not a new DenseState: papers without a vector must keep their plain lexical score
    mixed = (1 - fp.dense_mix) * dense.scores + fp.dense_mix * s
    return replace(dense, scores=mixed.astype(np.float32))


def _dense_taste(
    vectors: np.ndarray,
    has: np.ndarray,
    pos: list[int],
    neg: list[int],
    fp: FeedbackParams,
    share: float,
) -> DenseState | None:
    """Meaning for a taste with no typed words (liked papers, votes): closeness to the 👍
    centroid (minus the 👎 one, as far as ``fp`` pushes), with ``share`` of the score.

    The words and LSA learner alone ranked liked papers' fields below arxiv-sanity's SVM; the
    sentence embeddings see the field where the liked papers' wording differs. The share is the
    one meaning has in a voted topic (``dense_mix``) and is not ramped with the number of votes:
    it says how far meaning decides what the papers are about, not how far votes move it (a
    share ramped up by votes made 5 votes cost 0.019 nDCG@10 on library tasks).
    """
    if share <= 0 or not [r for r in pos if has[r]]:
        return None
    s = _closeness(vectors, has, pos, neg, fp)
    return DenseState(scores=s, weight=share, has=None if has.all() else has)


def _closeness(
    vectors: np.ndarray, has: np.ndarray, pos: list[int], neg: list[int], fp: FeedbackParams
) -> np.ndarray:
    """Each paper's closeness to the 👍 centroid minus ``dense_neg`` x the 👎 one, standardised
    over the embedded papers and scaled to 0..1 (0 for papers without a vector)."""
    pos, neg = [r for r in pos if has[r]], [r for r in neg if has[r]]
    direction = unit(vectors[pos].mean(axis=0))
    if neg:
        direction = direction - fp.dense_neg * unit(vectors[neg].mean(axis=0))
    s = vectors @ unit(direction)
    live = s[has]
    s = (s - float(live.mean())) / max(float(live.std()), 1e-9)
    s = np.clip(s / max(float(s[has].max()), 1e-9), 0.0, 1.0)
    s[~has] = 0.0
    return s.astype(np.float32)


def diversity(base: float, votes: int, fp: FeedbackParams | None = None) -> float:
    """The MMR weight for a channel with ``votes`` votes: near-duplicates are pushed apart only
    while the channel has not voted.

    A digest nobody voted on keeps near-duplicates apart (``diversity.NEAR_DUPLICATE``); once
    votes say what the channel wants, its own ranking decides (a hedge that shrank with each
    vote was neutral at 5 and 20 votes, and a hedge against every chosen paper cost the no-vote
    ranking 0.034 nDCG@10 on the theme file: ``bench/diversity.py``). ``fp`` is kept for the
    ablation's old schedule (``diversity_half``).
    """
    fp = fp or PARAMS
    if fp.diversity_half <= 0:  # 'off once voted' (the default)
        return base if votes <= 0 else 0.0
    return base * fp.diversity_half / (fp.diversity_half + max(votes, 0))
