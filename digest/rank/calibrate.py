"""Keeping a vote-refined topic on the scale the channel's threshold is defined on. No I/O.

Votes move a topic (digest/rank/feedback.py); the refined score is normalised by its own best
match, so a 👍 paper that now holds every borrowed word pushes the rest of the topic down
(0.75 -> 0.27) and one 👍 could empty the next digest. The threshold means "how well a paper
matches what this channel wants", so the refined scores are rescaled by one positive factor per
topic and votes: the papers that matched the topic before keep, on average, the score they had.
One factor per topic keeps the order the learner chose; only the threshold sees it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

from digest.rank.index import PaperIndex
from digest.rank.scorer import ScoreParams, TopicState, score

MATCHED = 0.1  # a paper scoring this much on the plain topic matched it (search's own cut-off)
REFERENCE = 20  # the topic's best matches that set the scale
MAX_SCALE = 10.0  # a topic whose matches all lost their score is not blown up without bound
#: Share of papers relevant at each shown score on the development files, per query kind (an
#: isotonic fit written by ``python -m bench.calibration --write``): 'kind score relevance' lines.
CURVE_FILE = Path(__file__).with_name("calibration.txt")
KEYWORD_WORDS = 3  # up to this many typed content words a topic is a keyword, else a theme
#: Suffix of a kind's curve fitted on scores with meaning fused in (semantic ranking): a fused
#: theme score of 0.35 was relevant about 1 time in 3 where a lexical 0.35 was 1 in 2.
FUSED = "+meaning"


@cache
def curves() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per query kind, (scores, share relevant) of the fitted reliability curve, read once."""
    points: dict[str, list[tuple[float, float]]] = {}
    if CURVE_FILE.exists():
        for line in CURVE_FILE.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                kind, x, y = line.split()
                points.setdefault(kind, []).append((float(x), float(y)))
    return {
        k: (np.array([x for x, _ in v]), np.array([y for _, y in v])) for k, v in points.items()
    }


#: The curve of the liked papers' interest (`like:` papers, a library import; votes alone use
#: the same learner), fitted on library tasks: one scale with typed topics.
LIKE = "like"


def read(scores: np.ndarray, kind: str) -> np.ndarray:
    """``scores`` read through ``kind``'s curve (as they are when no curve is shipped)."""
    curve = curves().get(kind)
    if curve is None:
        return np.asarray(scores, dtype=np.float32)
    return np.interp(scores, *curve).astype(np.float32)


def highest(kind: str) -> float | None:
    """The highest score a topic of ``kind`` is ever shown (its curve's top, to the hundredth
    below: a threshold at that value still lets its best papers through), None without one."""
    curve = curves().get(kind)
    if curve is None or not len(curve[1]):
        return None
    return float(np.floor(float(curve[1].max()) * 100 + 1e-9) / 100)


#: A topic of more than ``KEYWORD_WORDS`` typed words whose ten best matches hold less than this
#: share of its words' weight (``scorer.typed_coverage``) is 'loose': a field described in other
#: words than papers use. At one score such a topic's papers were relevant less often than a
#: theme's whose words they hold (paraphrases against themes: the same relevant papers).
LOOSE = 0.5


def kind_of(words: int, coverage: float | None = None) -> str:
    """The curve of a topic: 'keyword' up to ``KEYWORD_WORDS`` typed content words; longer,
    'theme', or 'loose' when ``coverage`` (when known) is under ``LOOSE``."""
    if words <= KEYWORD_WORDS:
        return "keyword"
    return "loose" if coverage is not None and coverage < LOOSE else "theme"


def relevance(
    scores: np.ndarray, words: int, fused: bool = False, coverage: float | None = None
) -> np.ndarray:
    """How often papers shown at ``scores`` were relevant on the development files, for a topic
    of ``words`` typed words and ``coverage`` (``kind_of``), ``fused`` when meaning has a share of
    its score (the kind's lexical curve when no fused one is shipped, the typed-words kind when
    no coverage one is; the scores themselves when no curve is)."""
    table = curves()
    for kind in dict.fromkeys((kind_of(words, coverage), kind_of(words))):
        curve = (table.get(kind + FUSED) if fused else None) or table.get(kind)
        if curve is not None:  # isotonic: linear between, flat outside
            return np.interp(scores, *curve).astype(np.float32)
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
