"""What the generic-word rule costs ranking: digestbot lexical with and without it vs TF-IDF.

The rule: a paper matching only a query's generic words (digest/rank/weak.py) gets no word
score. nDCG@10 on both files, ratio to TF-IDF with paired-bootstrap 95% intervals:
    python -m bench.generic_rule
"""

from __future__ import annotations

from bench.common import (
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
from bench.quality import fmt_ci
from digest.rank import scorer
from digest.rank.index import build_index


def main() -> None:
    docs, _ = load_eval()
    index = build_index(docs)
    tfidf = tfidf_baseline(docs)[2]
    for name, queries in load_query_files().items():
        base = per_query(tfidf, queries)[:, 0]
        got = {}
        for label, on in (("with the rule", True), ("without the rule (shipped)", False)):
            scorer.GENERIC_RULE = on
            got[label] = per_query(digestbot_rank(index), queries)[:, 0]
        scorer.GENERIC_RULE = False
        on, off = got["with the rule"], got["without the rule (shipped)"]
        rows = [[k, v.mean(), fmt_ci(*ratio_interval(v, base))] for k, v in got.items()]
        rows.append(["TF-IDF cosine", base.mean(), "1.000"])
        print(
            table(
                f"Generic-word rule, {name}.jsonl, {len(queries)} queries ({machine()})",
                ["digestbot lexical", "nDCG@10", "vs TF-IDF [95% CI]"],
                rows,
            )
        )
        print(f"with minus without: {fmt_ci(*paired_bootstrap(on, off), signed=True)}\n")


if __name__ == "__main__":
    main()
