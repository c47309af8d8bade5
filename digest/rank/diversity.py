"""Diversity for digests: maximal marginal relevance over the latent space. No I/O."""

from __future__ import annotations

import numpy as np

#: LSA cosine from which a paper counts as a near-duplicate of one already chosen; only those
#: are pushed apart (``bench/diversity.py``: a full MMR trade-off cost a no-vote ranking on the
#: theme file 0.034 nDCG@10, near-duplicates at 0.8 cost 0.001). None: the classic MMR trade-off.
NEAR_DUPLICATE: float | None = 0.8


def _penalty(max_sim: np.ndarray) -> np.ndarray:
    """What closeness to the papers chosen so far costs a candidate, before the MMR weight."""
    if NEAR_DUPLICATE is None:
        return max_sim
    return (max_sim >= NEAR_DUPLICATE).astype(np.float32)


def mmr(
    latent: np.ndarray,
    rows: np.ndarray,
    scores: np.ndarray,
    eligible: np.ndarray,
    size: int,
    diversity: float,
) -> list[int]:
    """Maximal marginal relevance: trade score for novelty against papers already chosen."""
    if size <= 0 or not len(eligible):
        return []
    pool = eligible[np.argsort(-scores[eligible], kind="stable")][: max(size * 20, 50)]
    vecs = latent[rows[pool]]
    chosen: list[int] = []
    max_sim = np.zeros(len(pool), dtype=np.float32)
    available = np.ones(len(pool), dtype=bool)
    for _ in range(min(size, len(pool))):
        value = (1 - diversity) * scores[pool] - diversity * _penalty(max_sim)
        value[~available] = -np.inf
        pick = int(np.argmax(value))
        chosen.append(int(pool[pick]))
        available[pick] = False
        max_sim = np.maximum(max_sim, vecs @ vecs[pick])
    return chosen


def fair_share(
    latent: np.ndarray,
    rows: np.ndarray,
    scores: np.ndarray,
    eligible: np.ndarray,
    groups: np.ndarray,
    size: int,
    diversity: float,
    sub: np.ndarray | None = None,
) -> list[int]:
    """Up to ``size`` of ``eligible``, each interest (``groups``: one id per row) in turn.

    ``sub`` (one id per row): parts of an interest that take its turns in turn, the one with
    the best paper first (the liked papers of a library are one interest; each liked paper is a
    part, so 20 imported papers take one interest's turns, and three unrelated ones each get one).

    Interests (group ids >= 0) take turns, the one with the best paper first, each taking its best paper left by
    MMR value against everything chosen so far; an interest with nothing left above the
    threshold drops out, so the others fill its places. With a topic and an author, 5 places
    split 3 and 2 while both have papers; one interest alone is plain ``mmr``.
    """
    if size <= 0 or not len(eligible):
        return []
    kinds = np.unique(groups[eligible])
    parted = sub is not None and len(np.unique(sub[eligible])) > len(kinds)
    if len(kinds[kinds >= 0]) <= 1 and not parted:  # one interest (-1 rows only fill places)
        return mmr(latent, rows, scores, eligible, size, diversity)
    pool = eligible[np.argsort(-scores[eligible], kind="stable")]
    # Each interest's candidates, best first; at most ``size`` MMR rounds look at each.
    by_kind = {int(k): pool[groups[pool] == k][: max(size * 20, 50)] for k in kinds}
    turn = sorted(by_kind, key=lambda k: -float(scores[by_kind[k][0]]))
    chosen: list[int] = []
    taken: set[int] = set()
    parts: dict[int, list[int]] = {}  # per interest, its parts in turn order (``sub``)
    while len(chosen) < size and turn:
        for k in list(turn):
            if len(chosen) >= size:
                break
            if k < 0 and len(turn) > 1:  # papers no interest scored wait for the others to end
                continue
            cand = np.array([i for i in by_kind[k] if i not in taken], dtype=np.int64)
            if not len(cand):
                turn.remove(k)
                continue
            if sub is not None and k >= 0:  # the part whose turn it is: the next in rotation
                order = parts.setdefault(k, list(dict.fromkeys(sub[cand].tolist())))
                while order and not (sub[cand] == order[0]).any():
                    order.pop(0)
                if order:
                    cand = cand[sub[cand] == order[0]]
                    order.append(order.pop(0))
            value = (1 - diversity) * scores[cand]
            if chosen and diversity > 0:
                sims = latent[rows[cand]] @ latent[rows[np.array(chosen)]].T
                value = value - diversity * _penalty(sims.max(axis=1))
            pick = int(cand[int(np.argmax(value))])
            chosen.append(pick)
            taken.add(pick)
    return chosen
