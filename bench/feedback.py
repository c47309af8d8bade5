"""Feedback simulation: day 1 shows a query's top 20 and collects 👍/👎; day 2 ranks the unseen papers."""

from __future__ import annotations

import time

import numpy as np
from sklearn.svm import LinearSVC

from bench.common import load_eval, machine, ndcg, table, tfidf_baseline, top_ids
from digest.rank.engine import Ranker
from digest.rank.index import build_index
from digest.rank.profile import Profile


def main() -> None:
    docs, queries = load_eval()
    ranker = Ranker(build_index(docs))
    ids = [d.id for d in docs]
    pos_of = {pid: i for i, pid in enumerate(ids)}
    vec, x, tfidf_rank = tfidf_baseline(docs)
    rows = {
        "no learning (topic only)": [],
        "arxiv-sanity SVM": [],
        "digestbot (topic + feedback)": [],
    }
    retrain_ms = []
    for q in queries:
        relevant = set(q["relevant"])
        shown = [h.paper_id for h in ranker.search(q["query"], per_page=20).hits]
        votes = tuple((pid, 1 if pid in relevant else -1) for pid in shown)
        unseen = [pid for pid in ids if pid not in set(shown)]
        target = relevant - set(shown)
        if not target:
            continue
        cold = ranker.rank(Profile(topics=(q["query"],)), unseen, size=10, threshold=0, diversity=0)
        rows["no learning (topic only)"].append(ndcg([h.paper_id for h in cold.hits], target))
        t0 = time.perf_counter()
        warm = ranker.rank(
            Profile(topics=(q["query"],), votes=votes), unseen, size=10, threshold=0, diversity=0
        )
        retrain_ms.append((time.perf_counter() - t0) * 1000)
        rows["digestbot (topic + feedback)"].append(ndcg([h.paper_id for h in warm.hits], target))
        rows["arxiv-sanity SVM"].append(
            ndcg(svm_rank(x, pos_of, votes, unseen, tfidf_rank, q["query"]), target)
        )
    base = np.mean(rows["arxiv-sanity SVM"])
    out = [[name, float(np.mean(v)), float(np.mean(v) / base)] for name, v in rows.items()]
    print(
        table(
            f"Feedback simulation, day-2 nDCG@10 over {len(rows['arxiv-sanity SVM'])} queries ({machine()})",
            ["system", "day-2 nDCG@10", "ratio vs SVM"],
            out,
        )
    )
    print(
        f"feedback re-rank incl. model fit, {len(docs)} papers: p50 {np.median(retrain_ms):.1f} ms, "
        f"max {np.max(retrain_ms):.1f} ms"
    )


def svm_rank(x, pos_of, votes, unseen, fallback, query) -> list[str]:
    """arxiv-sanity-lite: LinearSVC on tf-idf, 👍 papers against every other paper."""
    liked = [pos_of[p] for p, v in votes if v > 0]
    if not liked:
        return [p for p in fallback(query) if p in set(unseen)][:10]
    y = np.zeros(x.shape[0])
    y[liked] = 1
    clf = LinearSVC(class_weight="balanced", C=0.01, max_iter=10_000).fit(x, y)
    rows = np.array([pos_of[p] for p in unseen])
    return top_ids(unseen, clf.decision_function(x[rows]), k=10)


if __name__ == "__main__":
    main()
