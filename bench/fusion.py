"""What decides meaning's share of the fused score: typed word count, or what the corpus says.

Candidates (`SemanticParams.weight_by`), chosen before measuring: "words" (shipped: none up to
three content words, full share from seven); "reach" (share of papers any query word reaches,
1% -> none, 20% -> full share, log scale); "specific" (the same for its specific words only);
"flat" (top-10 lexical mean over the best: 0.70 -> none, 0.95 -> full); "either" (the larger of
"words" and "specific"). References, not candidates: every query at a fixed share. nDCG@10
on both files, each minus lexical and minus "words", paired bootstrap 95%; "mean share" is
meaning's average weight over the file's queries. Needs the semantic extra (dense vectors are
cached by bench.common, about 7 minutes idle to compute once):
    python -m bench.fusion
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

from bench.common import (
    dense_vectors,
    load_eval,
    load_query_files,
    machine,
    paired_bootstrap,
    per_query,
    table,
    top_ids,
)
from bench.quality import fmt_ci
from digest.embeddings import load_encoder
from digest.rank.index import build_index
from digest.rank.scorer import compile_query, score, topic_state
from digest.rank.semantic import SemanticParams

CANDIDATES = {
    "words (shipped)": SemanticParams(),
    "reach 1%..20%": SemanticParams(weight_by="reach"),
    "specific reach 1%..20%": SemanticParams(weight_by="specific"),
    "flat 0.70..0.95": SemanticParams(weight_by="flat"),
    "either (words or specific)": SemanticParams(weight_by="either"),
    "ref: every query 0.15": SemanticParams(max_weight=0.15, ramp_from=0, ramp_words=1),
    "ref: every query 0.35": SemanticParams(max_weight=0.35, ramp_from=0, ramp_words=1),
    "ref: every query 0.7": SemanticParams(ramp_from=0, ramp_words=1),
}


def ranker(index, encode, sp: SemanticParams | None, shares: list[float]):
    """digestbot's ranking as search sees it; records meaning's share of each query."""

    def rank(q: str) -> list[str]:
        cq = compile_query(index, q)
        if cq is None:
            return []
        state = topic_state(index, cq, None, encode(q) if sp else None, sp)
        shares.append(state.dense.weight if state.dense is not None else 0.0)
        return top_ids(index.ids, *score(index, state))

    return rank


def main() -> None:
    encoder = load_encoder()
    if encoder is None:
        raise SystemExit("the semantic extra is needed")
    docs, _ = load_eval()
    index = build_index(docs)
    index.dense, index.has_dense = dense_vectors(docs, encoder), np.ones(len(docs), dtype=bool)
    encode = lru_cache(maxsize=None)(lambda q: encoder.encode([q.strip().lower()])[0])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    for name, queries in load_query_files().items():
        lex = per_query(ranker(index, encode, None, []), queries)[:, 0]
        got, share = {}, {}
        for c, sp in CANDIDATES.items():
            shares: list[float] = []
            got[c] = per_query(ranker(index, encode, sp, shares), queries)[:, 0]
            share[c] = float(np.mean(shares))
        words = got["words (shipped)"]
        rows = [["lexical", lex.mean(), "", "", "0"]] + [
            [c, v.mean(), fmt_ci(*paired_bootstrap(v, lex), signed=True),
             "" if c.startswith("words") else fmt_ci(*paired_bootstrap(v, words), signed=True),
             f"{share[c]:.2f}"]
            for c, v in got.items()
        ]  # fmt: skip
        print(table(f"Meaning's share, {name}.jsonl, {len(queries)} queries ({machine()}, "
                    f"load {load:.1f})",
                    ["weight by", "nDCG@10", "minus lexical [95% CI]", "minus words [95% CI]",
                     "mean share"], rows))  # fmt: skip


if __name__ == "__main__":
    main()
