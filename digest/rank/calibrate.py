"""Keeping a vote-refined topic on the scale the channel's threshold is defined on. No I/O.

Votes move a topic (digest/rank/feedback.py); the refined score is normalised by its own best
match, so a 👍 paper that now holds every borrowed word pushes the rest of the topic down
(0.75 -> 0.27) and one 👍 could empty the next digest. The threshold means "how well a paper
matches what this channel wants", so the refined scores are rescaled by one positive factor per
topic and votes: the papers that matched the topic before keep, on average, the score they had.
One factor per topic keeps the order the learner chose; only the threshold sees it.
"""

from __future__ import annotations

import numpy as np

from digest.rank.index import PaperIndex
from digest.rank.scorer import ScoreParams, TopicState, score

MATCHED = 0.1  # a paper scoring this much on the plain topic matched it (search's own cut-off)
REFERENCE = 20  # the topic's best matches that set the scale
MAX_SCALE = 10.0  # a topic whose matches all lost their score is not blown up without bound


def scale(
    index: PaperIndex,
    base: TopicState | None,
    refined: TopicState | None,
    voted: list[int],
    params: ScoreParams,
) -> float:
    """The factor putting ``refined`` scores on ``base``'s scale (1.0 without a topic or matches).

    The reference is the topic's best plain matches the channel has not voted on (a voted paper
    is meant to move); their score-weighted mean is kept, so strong matches set the scale.
    """
    if base is None or refined is None or refined is base:
        return 1.0
    rows, before = score(index, base, None, params)
    keep = (before >= MATCHED) & ~np.isin(rows, voted)
    rows, before = rows[keep], before[keep]
    if not len(rows):
        return 1.0
    top = np.argsort(-before, kind="stable")[:REFERENCE]
    rows, before = rows[top], before[top].astype(np.float64)
    after = score(index, refined, rows, params)[1].astype(np.float64)
    den = float((before * after).sum())
    if den <= 0:
        return MAX_SCALE
    return min(float((before * before).sum()) / den, MAX_SCALE)
