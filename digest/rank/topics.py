"""Suggested topics mined from the corpus: NMF clusters of the term weights, labelled by phrases."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.decomposition import NMF
from sklearn.exceptions import ConvergenceWarning

from digest.rank.index import PaperIndex


@dataclass(frozen=True)
class TopicSuggestion:
    """A cluster of papers: a label to subscribe with, its top terms, and its size."""

    label: str
    terms: tuple[str, ...]
    papers: int


def _readable(index: PaperIndex, term: str) -> str:
    return " ".join(index.surface.get(s, s) for s in term.split())


def _df(index: PaperIndex, term: str) -> int:
    col = index.vocab.get(term)
    return 0 if col is None else int(index.weights.indptr[col + 1] - index.weights.indptr[col])


def _pmi(index: PaperIndex, t: str) -> float:
    """How much more often the two words of a phrase occur together than by chance (log)."""
    a, b = t.split(" ", 1)
    joint, da, db = _df(index, t), _df(index, a), _df(index, b)
    if joint < (2 if len(index) >= 50 else 1) or not da or not db:
        return 0.0
    return float(np.log(joint * len(index) / (da * db)))


# Verbs and fillers that head sentences rather than topics ('does cooperation', 'aims remove');
# they stay searchable, they just never name a topic.
_LOOSE = frozenset(
    [
        "does",
        "do",
        "did",
        "aims",
        "aim",
        "aimed",
        "allows",
        "enables",
        "makes",
        "remains",
        "remain",
        "uses",
        "yields",
    ]
)


def _nameable(term: str) -> bool:
    return not set(term.split()) & _LOOSE


def _phrase(index: PaperIndex, top: list[str]) -> str | None:
    """The cluster's best noun-like phrase: one that ends in a leading word ('machine unlearning').

    English phrases put their head last, so 'approximate machine' or 'cooperation evolve' (whose
    last word is not what the cluster is about) lose; in a large corpus the two words must also
    occur together more often than chance (PMI), which rules out loose pairs.
    """
    heads = [t for t in top if " " not in t][:1]
    for t in top:
        if not (" " in t and _nameable(t) and t.split()[-1] in heads):
            continue
        if len(index) < 50 or _pmi(index, t) > 0.5:
            return t
    return None


def suggest(
    index: PaperIndex, k: int = 8, sample: int = 5000, seed: int = 0
) -> list[TopicSuggestion]:
    """Up to ``k`` topics; the label is the strongest phrase of each cluster."""
    n = len(index)
    k = max(1, min(k, n // 3))
    if n < 6:
        return []
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, size=min(n, sample), replace=False))
    # Terms that are neither rare nor everywhere say the most about a cluster.
    cols = index.latent_cols[
        (index.idf[index.latent_cols] > 1.5) & (index.idf[index.latent_cols] < 7.5)
    ]
    if len(cols) < k:
        return []
    x = index.weights[rows][:, cols]
    model = NMF(n_components=k, init="nndsvda", random_state=seed, max_iter=300)
    with (
        warnings.catch_warnings()
    ):  # an unconverged NMF still gives usable clusters for suggestions
        warnings.simplefilter("ignore", ConvergenceWarning)
        membership = model.fit_transform(x).argmax(axis=1)
    inv = {c: t for t, c in index.vocab.items()}
    out = []
    for j, comp in enumerate(model.components_):
        top = [inv[int(cols[i])] for i in np.argsort(-comp)[:12] if comp[i] > 0]
        top = [t for t in top if _nameable(t)]
        if not top:
            continue
        phrase = _phrase(index, top)
        label = _readable(index, phrase or top[0])
        words = set((phrase or top[0]).split())
        keep = [
            t for t in top if not set(t.split()) <= words and (" " not in t or _pmi(index, t) > 1)
        ]
        terms = tuple(dict.fromkeys(_readable(index, t) for t in keep))[:6]
        out.append(TopicSuggestion(label, terms, int((membership == j).sum() * n / len(rows))))
    return sorted(out, key=lambda t: -t.papers)
