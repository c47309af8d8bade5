"""Keeping a vote-refined topic on the scale the channel's threshold is defined on. No I/O.

Votes move a topic (digest/rank/feedback.py); the refined score is normalised by its own best
match, so a 👍 paper that now holds every borrowed word pushes the rest of the topic down
(0.75 -> 0.27) and one 👍 could empty the next digest. The threshold means "how well a paper
matches what this channel wants", so the refined scores are rescaled by one positive factor per
topic and votes: the papers that matched the topic before keep, on average, the score they had.
One factor per topic keeps the order the learner chose; only the threshold sees it.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import numpy as np

from digest.rank.index import PaperIndex
from digest.rank.scorer import ScoreParams, TopicState, score

MATCHED = 0.1  # a paper scoring this much on the plain topic matched it (search's own cut-off)
REFERENCE = 20  # the topic's best matches that set the scale
MAX_SCALE = 10.0  # a topic whose matches all lost their score is not blown up without bound
#: Per curve, the share of papers relevant at a raw score as a logistic function of the score's
#: logit and of the topic's coverage (``scorer.typed_coverage``; 1.0 for the liked papers), and
#: the most it may show (the share relevant among the curve's highest-scoring papers): 'kind a b
#: c cap' lines written by ``python -m bench.calibration --write``. Three numbers a curve, fitted
#: on half the queries and judged on the other half, where 51-point isotonic curves overfitted.
CURVE_FILE = Path(__file__).with_name("calibration.txt")
KEYWORD_WORDS = 3  # up to this many typed content words a topic is a keyword, else a theme
#: Suffix of a kind's curve fitted on scores with meaning fused in (semantic ranking): a fused
#: theme score of 0.35 was relevant about 1 time in 3 where a lexical 0.35 was 1 in 2.
FUSED = "+meaning"


@cache
def curves() -> dict[str, np.ndarray]:
    """Per curve kind, its (a, b, c, cap), read once."""
    out: dict[str, np.ndarray] = {}
    if CURVE_FILE.exists():
        for line in CURVE_FILE.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                kind, *numbers = line.split()
                out[kind] = np.array([float(x) for x in numbers], dtype=np.float64)
    return out


EDGE = 1e-3  # raw scores are read within [EDGE, 1 - EDGE]: the logit of 0 or 1 is infinite


def logistic(
    params: np.ndarray, scores: np.ndarray, coverage: float | np.ndarray | None = None
) -> np.ndarray:
    """The share relevant at raw ``scores`` on one curve (``params``: a, b, c, cap); a raw 0 (no
    interest matches) is shown as 0."""
    a, b, c, top = params
    s = np.clip(np.asarray(scores, dtype=np.float64), EDGE, 1 - EDGE)
    cov = 1.0 if coverage is None else coverage
    p = 1.0 / (1.0 + np.exp(-(a + b * np.log(s / (1 - s)) + c * np.asarray(cov))))
    return np.where(np.asarray(scores) > 0, np.minimum(p, top), 0.0)


#: The curve of the liked papers' interest (`like:` papers, a library import; votes alone use
#: the same learner), fitted on library tasks: one scale with typed topics.
LIKE = "like"


def read(
    scores: np.ndarray, kind: str, coverage: float | None = None, fused: bool = False
) -> np.ndarray:
    """``scores`` read through ``kind``'s curve, its ``FUSED`` one when meaning has a share of
    them and one is shipped (as they are when no curve is shipped)."""
    params = curves().get(kind + FUSED) if fused else None
    params = curves().get(kind) if params is None else params
    if params is None:
        return np.asarray(scores, dtype=np.float32)
    return logistic(params, scores, coverage).astype(np.float32)


def highest(kind: str) -> float | None:
    """The highest score a topic of ``kind`` is ever shown (its curve's top at any coverage, to
    the hundredth below: a threshold at that value still lets its best papers through), None
    without one."""
    params = curves().get(kind)
    if params is None:
        return None
    top = max(float(logistic(params, np.ones(1), cov)[0]) for cov in (0.0, 1.0))
    return float(np.floor(top * 100 + 1e-9) / 100)


#: A topic of more than ``KEYWORD_WORDS`` typed words whose ten best matches hold less than this
#: share of its words' weight (``scorer.typed_coverage``) is 'loose': a field described in other
#: words than papers use. At one score such a topic's papers were relevant less often than a
#: theme's whose words they hold (paraphrases against themes: the same relevant papers).
LOOSE = 0.5


#: A topic that lists several things ('causal inference and causal discovery', '3D vision:
#: reconstruction, point clouds') describes a field, however few its words: it is read as a theme.
LISTING = re.compile(r"[,;:&/]|\b(?:and|or)\b", re.IGNORECASE)


def lists(text: str) -> bool:
    """True when ``text`` lists several things (``LISTING``)."""
    return bool(LISTING.search(text))


def kind_of(words: int, coverage: float | None = None, listing: bool = False) -> str:
    """The curve of a topic: 'keyword' up to ``KEYWORD_WORDS`` typed content words unless it
    lists several things (``lists``); else 'theme', or 'loose' when ``coverage`` (when known)
    is under ``LOOSE``."""
    if words <= KEYWORD_WORDS and not listing:
        return "keyword"
    return "loose" if coverage is not None and coverage < LOOSE else "theme"


def relevance(
    scores: np.ndarray,
    words: int,
    fused: bool = False,
    coverage: float | None = None,
    listing: bool = False,
) -> np.ndarray:
    """How often papers shown at ``scores`` were relevant on the development files, for a topic
    of ``words`` typed words and ``coverage`` (``kind_of``), ``fused`` when meaning has a share of
    its score (the kind's lexical curve when no fused one is shipped, the typed-words kind when
    no coverage one is; the scores themselves when no curve is)."""
    table = curves()
    kinds = (kind_of(words, coverage, listing), kind_of(words, None, listing), kind_of(words))
    for kind in dict.fromkeys(kinds):
        params = table.get(kind + FUSED) if fused else None
        params = table.get(kind) if params is None else params
        if params is not None:
            return logistic(params, scores, coverage).astype(np.float32)
    return np.asarray(scores, dtype=np.float32)


def scale(
    index: PaperIndex,
    base: TopicState | None,
    refined: TopicState | None,
    voted: list[int],
    params: ScoreParams,
) -> float:
    """The factor putting ``refined`` scores on ``base``'s scale (1.0 without a topic or matches);
    the curve (``relevance``) then reads the scaled score as it reads the plain topic's.

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
