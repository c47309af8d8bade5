"""Ranking quality on the development set: digestbot's ranker vs TF-IDF and BM25, in one run."""

from __future__ import annotations

import sys

from bench.common import bm25_baseline, evaluate, load_eval, machine, table, tfidf_baseline, top_ids
from digest.rank.index import build_index
from digest.rank.scorer import compile_query, score


def ours(docs):
    index = build_index(docs)

    def rank(q: str) -> list[str]:
        cq = compile_query(index, q)
        return [] if cq is None else top_ids(index.ids, *score(index, cq))

    return rank


def main() -> None:
    docs, queries = load_eval()
    results = {
        "digestbot (hybrid)": evaluate(ours(docs), queries),
        "TF-IDF cosine": evaluate(tfidf_baseline(docs)[2], queries),
        "BM25 (bm25s)": evaluate(bm25_baseline(docs)[1], queries),
    }
    rows = [[name, *m.values()] for name, m in results.items()]
    ours_n = results["digestbot (hybrid)"]["nDCG@10"]
    rows.append(["ratio vs TF-IDF", ours_n / results["TF-IDF cosine"]["nDCG@10"], "", ""])
    rows.append(["ratio vs BM25", ours_n / results["BM25 (bm25s)"]["nDCG@10"], "", ""])
    print(
        table(
            f"Quality, {len(docs)} papers, {len(queries)} queries ({machine()})",
            ["system", "nDCG@10", "P@10", "MAP@100"],
            rows,
        )
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
