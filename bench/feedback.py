"""Feedback through the real path: votes stored by the channel service, digests composed as delivered.

Per query a channel subscribes to the query text. Day 1: its digest (20 papers, diversity as
delivered) is shown and every item gets 👍 (relevant) or 👎 through `ChannelService.vote`, which
stores it. Day 2: the channel's next digest (size 10, threshold 0) over the papers it has not
seen, composed by `ChannelService.preview`, scored by nDCG@10 against the relevant papers not
yet shown. arxiv-sanity-lite's SVM (its own TF-IDF and LinearSVC settings) learns from the same
👍 papers. Both query files, paired-bootstrap intervals:  python -m bench.feedback
"""

from __future__ import annotations

import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC

from bench.common import (
    EVAL_DIR,
    load_eval,
    load_query_files,
    machine,
    ndcg,
    ratio_interval,
    table,
    top_ids,
)
from bench.quality import fmt_ci
from digest.channels import ChannelService
from digest.ingest.parse import make_record
from digest.models import ChannelRef, SubscriptionKind
from digest.service import DigestService
from digest.store import Store

DAY1, DAY2 = date(2026, 12, 1), date(2026, 12, 2)


def arxiv_sanity_features(docs):
    """arxiv-sanity-lite's TF-IDF (compute.py) over title and abstract."""
    v = TfidfVectorizer(input="content", encoding="utf-8", decode_error="replace",
                        strip_accents="unicode", lowercase=True, analyzer="word", stop_words="english",
                        token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b", ngram_range=(1, 2),
                        max_features=20000, norm="l2", use_idf=True, smooth_idf=True,
                        sublinear_tf=True, max_df=0.1, min_df=5)  # fmt: skip
    return v.fit_transform([f"{d.title}. {d.abstract}" for d in docs])


def svm_day2(x, ids, pos_of, liked: list[str], unseen: list[str]) -> list[str]:
    """arxiv-sanity-lite's recommender (serve.py): LinearSVC, 👍 papers against all others."""
    if not liked:
        return []
    y = np.zeros(x.shape[0])
    y[[pos_of[p] for p in liked]] = 1
    clf = LinearSVC(class_weight="balanced", verbose=False, max_iter=10000, tol=1e-6, C=0.1)
    clf.fit(x, y)
    rows = np.array([pos_of[p] for p in unseen])
    return top_ids(unseen, clf.decision_function(x[rows]), k=10)


def open_service(folder: Path, docs) -> tuple[ChannelService, Store]:
    store = Store.open(f"sqlite:///{folder / 'bench.db'}")
    store.papers.upsert([make_record(source="jsonl", id=d.id, title=d.title, abstract=d.abstract)
                         for d in docs])  # fmt: skip
    return ChannelService(DigestService(store, folder / "index")), store


def run_query(svc: ChannelService, n: int, q: dict) -> tuple[list[str], list[str], float]:
    """(day-1 shown ids, day-2 digest ids, ms for the day-2 compose) for one channel."""
    ref = ChannelRef("bench", f"c{n}")
    svc.add(ref, SubscriptionKind.TOPIC, q["query"])
    svc.set_size(ref, "20")
    svc.set_threshold(ref, "0")
    shown = [i.paper.id for i in svc.preview(ref, DAY1).items]
    relevant = set(q["relevant"])
    for pid in shown:
        svc.vote(ref, "ann", pid, 1 if pid in relevant else -1)
    svc.set_size(ref, "10")
    t = time.perf_counter()
    day2 = [i.paper.id for i in svc.preview(ref, DAY2).items]
    return shown, day2, (time.perf_counter() - t) * 1000


def main() -> None:
    docs, _ = load_eval()
    ids = [d.id for d in docs]
    pos_of = {pid: i for i, pid in enumerate(ids)}
    x = arxiv_sanity_features(docs)
    with tempfile.TemporaryDirectory() as tmp:
        svc, store = open_service(Path(tmp), docs)
        n = 0
        for name, queries in load_query_files(EVAL_DIR).items():
            ours, svm, ms = [], [], []
            for q in queries:
                n += 1
                shown, day2, took = run_query(svc, n, q)
                target = set(q["relevant"]) - set(shown)
                if not target:
                    continue
                liked = [p for p in shown if p in set(q["relevant"])]
                unseen = [p for p in ids if p not in set(shown)]
                ours.append(ndcg(day2, target))
                svm.append(ndcg(svm_day2(x, ids, pos_of, liked, unseen), target))
                ms.append(took)
            a, b = np.array(ours), np.array(svm)
            rows = [["digestbot (topic + 👍/👎, real path)", a.mean(), fmt_ci(*ratio_interval(a, b))],
                    ["arxiv-sanity-lite SVM", b.mean(), "1.000"]]  # fmt: skip
            print(table(f"Feedback, {name}.jsonl: day-2 nDCG@10 over {len(a)} channels ({machine()})",
                        ["system", "day-2 nDCG@10", "ratio vs SVM [95% CI]"], rows))  # fmt: skip
            print(f"day-2 digest compose incl. feedback model, {len(docs)} papers: "
                  f"p50 {np.median(ms):.0f} ms, max {np.max(ms):.0f} ms\n")  # fmt: skip
        store.close()


if __name__ == "__main__":
    main()
