"""What decides meaning's share of the fused score: typed word count, or what the corpus says.

Candidates (`SemanticParams.weight_by`): "words" (shipped: none up to three content words),
"reach" (the share of papers the query's specific words reach, 1% -> none, 20% -> full share,
log scale), "either" (the larger). nDCG@10 on both files, each minus lexical and minus "words",
paired bootstrap 95%. Needs the semantic extra (dense vectors cached by bench.common):
    python -m bench.fusion
"""

from __future__ import annotations

import numpy as np

from bench.common import (
    dense_vectors,
    digestbot_rank,
    load_eval,
    load_query_files,
    machine,
    paired_bootstrap,
    per_query,
    table,
)
from bench.quality import fmt_ci
from digest.embeddings import load_encoder
from digest.rank.index import build_index
from digest.rank.semantic import SemanticParams

CANDIDATES = {
    "words (shipped)": SemanticParams(),
    "reach 1%..20%": SemanticParams(weight_by="reach"),
    "reach 2%..40%": SemanticParams(weight_by="reach", reach_none=0.02, reach_full=0.4),
    "either (words or reach 1%..20%)": SemanticParams(weight_by="either"),
}


def main() -> None:
    encoder = load_encoder()
    if encoder is None:
        raise SystemExit("the semantic extra is needed")
    docs, _ = load_eval()
    index = build_index(docs)
    lexical = digestbot_rank(index)
    index.dense, index.has_dense = dense_vectors(docs, encoder), np.ones(len(docs), dtype=bool)
    for name, queries in load_query_files().items():
        lex = per_query(lexical, queries)[:, 0]
        got = {c: per_query(digestbot_rank(index, encoder, None, sp), queries)[:, 0]
               for c, sp in CANDIDATES.items()}  # fmt: skip
        words = got["words (shipped)"]
        rows = [["lexical", lex.mean(), "", ""]] + [
            [c, v.mean(), fmt_ci(*paired_bootstrap(v, lex), signed=True),
             "" if c.startswith("words") else fmt_ci(*paired_bootstrap(v, words), signed=True)]
            for c, v in got.items()
        ]  # fmt: skip
        print(table(f"Meaning's share, {name}.jsonl, {len(queries)} queries ({machine()})",
                    ["weight by", "nDCG@10", "minus lexical [95% CI]", "minus words [95% CI]"],
                    rows))  # fmt: skip


if __name__ == "__main__":
    main()
