"""Parameter sweep on the development set (what the defaults in IndexParams/ScoreParams came from)."""

from __future__ import annotations

import itertools
import sys
from dataclasses import replace

from bench.common import evaluate, load_eval, load_query_files, top_ids
from digest.rank.index import IndexParams, build_index
from digest.rank.scorer import ScoreParams, compile_query, score


def run(index, queries, sp: ScoreParams) -> dict[str, float]:
    """nDCG@10 and MAP@100 on both query files ('queries' as given is ignored: both are used)."""

    def rank(q):
        cq = compile_query(index, q, sp)
        return [] if cq is None else top_ids(index.ids, *score(index, cq, p=sp))

    out = {}
    for name, qs in load_query_files().items():
        m = evaluate(rank, qs)
        out[f"nDCG@10 {name}"], out[f"MAP@100 {name}"] = m["nDCG@10"], m["MAP@100"]
    return out


def main(grid: str = "score") -> None:
    docs, queries = load_eval()
    base_i, base_s = IndexParams(), ScoreParams()
    if grid == "index":
        for tw, k1, b, k in itertools.product([2.0, 3.0, 5.0], [1.2, 2.0], [0.5, 0.75], [128]):
            ip = replace(base_i, title_weight=tw, k1=k1, b=b, n_components=k)
            m = run(build_index(docs, ip), queries, base_s)
            print(f"tw={tw} k1={k1} b={b} k={k}: {m}", flush=True)
        return
    index = build_index(docs, base_i)
    for lw, beta, m_, pw in itertools.product(
        [0.2, 0.3, 0.45], [0.5, 1.0, 2.0], [5, 10, 20], [1.0, 2.0]
    ):
        sp = replace(base_s, latent_weight=lw, prf_beta=beta, prf_docs=m_, phrase_weight=pw)
        m = run(index, queries, sp)
        print(f"lw={lw} beta={beta} m={m_} pw={pw}: {m}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
