"""Where the CPU time of an index build and of a re-rank after a 👍 goes (bench.speed's corpus).

    python -m bench.build_stages                      # 100,000 papers
    python -m bench.build_stages --size 300000 --svd-iter 4

Each stage of ``build_index`` is timed by wrapping the function that does it (CPU time, one BLAS
thread, one worker, as bench.speed); stages nest (counting includes the title surface words).
The re-rank part repeats bench.speed's "re-rank after 👍" loop and times the read of the liked
papers' rows of the column-major weight matrix on its own.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from threadpoolctl import threadpool_limits

import digest.rank.counting as counting
import digest.rank.index as index_mod
from bench.common import machine, table
from bench.speed import load, synthetic
from digest.rank.analyzer import AcronymTable
from digest.rank.profile import Profile
from digest.rank.ranker import Ranker

clock = time.process_time
STAGES = [
    (index_mod, "count_corpus", "counting (tokens, phrases, counts)"),
    (counting, "surface_forms", "  of which title surface words"),
    (index_mod, "doc_freq", "document frequency"),
    (index_mod, "select_columns", "column selection (vocabulary, LSA terms)"),
    (index_mod, "_bm25f", "BM25F weights (CSC)"),
    (index_mod, "_tfidf_rows", "tf-idf rows for the LSA"),
    (index_mod, "_fit_basis", "LSA basis (randomized SVD, 40k sample)"),
    (index_mod, "_unit", "unit latent rows"),
    (index_mod, "families", "word families"),
]


def timed(spent: dict[str, float], label: str, fn: Callable) -> Callable:
    """``fn``, adding its CPU time to ``spent[label]``."""

    def run(*args, **kwargs):
        t = clock()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + clock() - t

    return run


def build_rows(docs, params) -> tuple[list[list], object]:
    """(table rows of CPU seconds per stage, the index)."""
    spent: dict[str, float] = {}
    for mod, name, label in STAGES:
        setattr(mod, name, timed(spent, label, getattr(mod, name)))
    mine = AcronymTable.mine.__func__
    AcronymTable.mine = classmethod(timed(spent, "corpus acronyms", mine))
    t = clock()
    index = index_mod.build_index(docs, params)
    total = clock() - t
    order = [label for _, _, label in STAGES] + ["corpus acronyms"]
    rows = [[label, f"{spent[label]:.2f}"] for label in order if label in spent]
    rows.append(["rest (latent projection, ids, arrays)", f"{total - sum_top(spent):.2f}"])
    return rows + [["**whole build**", f"{total:.2f}"]], index


def sum_top(spent: dict[str, float]) -> float:
    return sum(s for label, s in spent.items() if not label.startswith("  "))


def rerank_rows(index, docs, pool) -> list[list]:
    """bench.speed's re-rank after 👍 (50 channels), and the liked-rows read alone, in ms."""
    new = [d.id for d in docs[-1000:]]
    whole, rows_read = [], []
    for k, q in enumerate(pool[:50]):
        liked = docs[k * 7 : k * 7 + 20]
        votes = tuple((d.id, 1 if i % 3 else -1) for i, d in enumerate(liked))
        ranker = Ranker(index)
        ranker.state(q)
        t = clock()
        ranker.rank(Profile(topics=(q,), votes=votes), new, size=5)
        whole.append((clock() - t) * 1000)
        pos = [index.pos[pid] for pid, v in votes if v > 0]
        t = clock()
        index.weights[pos].mean(axis=0)
        rows_read.append((clock() - t) * 1000)
    return [
        ["re-rank after 👍, whole (p50 ms)", f"{np.median(whole):.1f}"],
        [
            "  of which reading the 👍 rows of the CSC weights (p50 ms)",
            f"{np.median(rows_read):.1f}",
        ],
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--svd-iter", type=int, default=index_mod.IndexParams().svd_iter)
    args = ap.parse_args()
    threadpool_limits(1)
    docs, pool = synthetic(args.size)
    params = replace(index_mod.IndexParams(workers=1), svd_iter=args.svd_iter)
    rows, index = build_rows(docs, params)
    rows += rerank_rows(index, docs, pool)
    w = index.weights
    title = (
        f"Build stages, {args.size:,} papers, svd_iter={args.svd_iter}, weights {w.shape[0]:,} x "
        f"{w.shape[1]:,}, {w.nnz:,} stored ({machine()}, load average {load()})"
    )
    print(table(title, ["stage", "CPU s"], rows))


if __name__ == "__main__":
    main()
