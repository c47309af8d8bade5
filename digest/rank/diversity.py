"""Diversity for digests: maximal marginal relevance over the latent space. No I/O."""

from __future__ import annotations

import numpy as np


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
        value = (1 - diversity) * scores[pool] - diversity * max_sim
        value[~available] = -np.inf
        pick = int(np.argmax(value))
        chosen.append(int(pool[pick]))
        available[pick] = False
        max_sim = np.maximum(max_sim, vecs @ vecs[pick])
    return chosen
