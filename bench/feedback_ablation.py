"""What each part of feedback learning is worth, through the real path, on both query files.

Day 1 as in bench/feedback.py (digest of 20 composed by the channel service, every item voted
through `ChannelService.vote`); then, per variant, the learner is swapped and every channel's
day-2 digest is composed again by `ChannelService.preview`. Each row: day-2 nDCG@10, ratio to
arxiv-sanity-lite's SVM and the paired difference to the kept setting, 95% bootstrap intervals.
Variants that change `FeedbackParams` are the shipped code with one setting changed; the other
learners tried (and lost) wrap `feedback.learn` here.  python -m bench.feedback_ablation [--semantic]
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn.svm import LinearSVC

from bench.common import (
    EVAL_DIR,
    load_eval,
    load_query_files,
    machine,
    ndcg,
    paired_bootstrap,
    ratio_interval,
    table,
)
from bench.feedback import arxiv_sanity_features, day1, day2, open_service, svm_day2
from bench.feedback_tried import TRIED
from bench.quality import fmt_ci
from digest.rank import feedback

KEPT = feedback.FeedbackParams()
SETTINGS: dict[str, feedback.FeedbackParams] = {
    "kept setting": KEPT,
    "before this round (PRF leans on 👎 papers too)": replace(KEPT, prf_skips_disliked=False),
    "MMR half at 5 votes (as before)": replace(KEPT, diversity_half=5.0),
    "MMR 0.3 whatever the votes": replace(KEPT, diversity_half=1e12),
    "no MMR once a channel has voted": replace(KEPT, diversity_half=1e-12),
    "no 👎 words": replace(KEPT, neg_scale=0.0),
    "👎 words at 0.6": replace(KEPT, neg_scale=0.6),
    "20 👎 words": replace(KEPT, neg_terms=20),
    "no borrowed words": replace(KEPT, terms=0),
    "no LSA pull (👍 0, 👎 0)": replace(KEPT, latent_pos=0.0, latent_neg=0.0),
    "LSA 👍 pull 4.0": replace(KEPT, latent_pos=4.0),
    "LSA 👎 push 2.0": replace(KEPT, latent_neg=2.0),
}


def _unit_rows(m: sparse.csr_matrix) -> sparse.csr_matrix:
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    return (sparse.diags(1 / np.maximum(norms, 1e-9)) @ m).tocsr()


def _to01(s: np.ndarray) -> np.ndarray:
    """Median 0, best 1, clipped: a learner's scores on the word score's scale."""
    s = s - float(np.median(s))
    return np.clip(s / max(float(s.max()), 1e-9), 0.0, 1.0).astype(np.float32)


def svm_blend(index, state, pos, neg):
    """A linear SVM on the index's BM25F rows (👍 vs all others) averaged into the word score."""
    x = _unit_rows(index.weights.tocsr())
    y = np.zeros(len(index))
    y[pos] = 1
    clf = LinearSVC(class_weight="balanced", C=0.1, tol=1e-6, max_iter=10000).fit(x, y)
    return 0.5 * state.lex + 0.5 * _to01(clf.decision_function(x))


def knn_push(index, state, pos, neg):
    """Closeness (LSA) to the 3 nearest 👍 papers added, to the 3 nearest 👎 subtracted."""

    def near(rows):
        if not rows:
            return np.zeros(len(index), dtype=np.float32)
        sims = index.latent @ index.latent[rows].T
        return np.sort(sims, axis=1)[:, -min(3, len(rows)) :].mean(axis=1)

    return np.clip(state.lex + 0.3 * (near(pos) - near(neg)), 0.0, None)


LEARNERS: dict[str, Callable] = {
    "+ SVM on BM25F features, averaged in (tried, not kept)": svm_blend,
    "+ 👍/👎 nearest-neighbour pull/push (tried, not kept)": knn_push,
}


def with_learner(extra: Callable | None, whole: bool = False) -> None:
    """Install ``extra`` on top of the shipped learner (None: the shipped learner alone);
    ``whole``: ``extra`` is a learner of its own, given the shipped one (bench/feedback_tried.py)."""
    shipped = getattr(feedback, "_shipped_learn", feedback.learn)
    feedback._shipped_learn = shipped
    if whole and extra is not None:
        feedback.learn = partial(extra, shipped)
        return

    def learn(index, base, pos, neg, score_params=None, fp=None):
        state = shipped(index, base, pos, neg, score_params, fp)
        if extra is None or state is None or not pos:
            return state
        return replace(state, lex=extra(index, state, pos, neg).astype(np.float32))

    feedback.learn = learn


def day2_scores(svc, channels) -> np.ndarray:
    """Every channel's day-2 nDCG@10 under the learner in force."""
    svc.papers.ranker()._refined.clear()  # learned states are cached per topic and votes
    return np.array([ndcg(day2(svc, ref)[0], target) for ref, target, _ in channels])


def reordered(svc, channels, k: int) -> np.ndarray:
    """Ceiling: the kept learner's day-2 top ``k`` (no MMR) reordered by the labels, top 10 scored."""
    ranker = svc.papers.ranker()
    ranker._refined.clear()  # the last variant's learned states are cached
    out = []
    for ref, target, unseen in channels:
        hits = ranker.rank(svc.profile(svc.channel(ref)), unseen, k, 0.0, 0.0).hits
        picks = [h.paper_id for h in hits]
        out.append(ndcg(sorted(picks, key=lambda p: p not in target)[:10], target))
    return np.array(out)


def main() -> None:
    docs, _ = load_eval()
    ids = [d.id for d in docs]
    pos_of = {pid: i for i, pid in enumerate(ids)}
    x = arxiv_sanity_features(docs)
    semantic = "--semantic" in sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        svc, store = open_service(Path(tmp), docs, semantic=semantic)
        start = 1
        for name, queries in load_query_files(EVAL_DIR).items():
            channels, svm = [], []
            for n, q in enumerate(queries, start):
                ref, shown = day1(svc, n, q)
                target = set(q["relevant"]) - set(shown)
                if target:
                    liked = [p for p in shown if p in set(q["relevant"])]
                    unseen = [p for p in ids if p not in set(shown)]
                    channels.append((ref, target, unseen))
                    svm.append(ndcg(svm_day2(x, ids, pos_of, liked, unseen), target))
            start += len(queries)
            report(name, semantic, svc, channels, np.array(svm))
        store.close()


def report(name: str, semantic: bool, svc, channels, svm: np.ndarray) -> None:
    """One table per query file: every variant against the SVM and against the kept setting."""
    results: dict[str, np.ndarray] = {}
    with_learner(None)
    for label, fp in SETTINGS.items():
        feedback.PARAMS = fp
        results[label] = day2_scores(svc, channels)
    feedback.PARAMS = KEPT
    for label, extra in LEARNERS.items():
        with_learner(extra)
        results[label] = day2_scores(svc, channels)
    for label, learner in TRIED.items():
        with_learner(learner, whole=True)
        results[label] = day2_scores(svc, channels)
    with_learner(None)
    best = np.max(np.stack(list(results.values())), axis=0)  # chosen per channel after the fact
    results["ceiling: the best row above for each channel"] = best
    for k in (10, 20):
        results[f"ceiling: kept top {k} reordered by the labels"] = reordered(svc, channels, k)
    kept = results["kept setting"]
    rows = [
        [
            label,
            a.mean(),
            fmt_ci(*ratio_interval(a, svm)),
            fmt_ci(*paired_bootstrap(a, kept), signed=True),
        ]
        for label, a in results.items()
    ]
    mode = "with semantic ranking" if semantic else "lexical"
    print(
        table(
            f"Feedback ablation, {name}.jsonl, {mode}: {len(kept)} channels ({machine()})",
            ["variant", "day-2 nDCG@10", "vs SVM [95% CI]", "minus kept [95% CI]"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
