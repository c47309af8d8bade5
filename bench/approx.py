"""Speed-for-accuracy trades, each against the exact setting, on both development query files.

Kept only when the change is within the paired-bootstrap interval on both files (nDCG@10,
digestbot lexical):  python -m bench.approx
"""

from __future__ import annotations

from dataclasses import replace

from bench.common import (
    digestbot_rank,
    load_eval,
    load_query_files,
    machine,
    paired_bootstrap,
    per_query,
    table,
)
from bench.quality import fmt_ci
from digest.rank.index import IndexParams, build_index
from digest.rank.scorer import ScoreParams

IP, SP = IndexParams(), ScoreParams()
# (label, exact setting, approximation): index and score parameters.
TRADES = [
    ("LSA: 3 SVD power iterations (vs 4), kept", (replace(IP, svd_iter=4), SP), (IP, SP)),
    ("LSA: 2 SVD power iterations (vs 3), not kept", (IP, SP), (replace(IP, svd_iter=2), SP)),
    (
        "LSA scored on 500 lexical candidates (vs 1,000), not kept",
        (IP, SP),
        (IP, replace(SP, candidates=500)),
    ),
]


def main() -> None:
    docs, _ = load_eval()
    files = load_query_files()
    cache: dict = {}

    def ndcgs(ip: IndexParams, sp: ScoreParams) -> dict:
        if ip not in cache:
            cache[ip] = build_index(docs, ip)
        rank = digestbot_rank(cache[ip], score_params=sp)
        return {name: per_query(rank, qs)[:, 0] for name, qs in files.items()}

    rows = []
    for label, exact, approx in TRADES:
        a, b = ndcgs(*exact), ndcgs(*approx)
        rows.append(
            [label]
            + [
                f"{a[f].mean():.4f} → {b[f].mean():.4f}, {fmt_ci(*paired_bootstrap(b[f], a[f]), signed=True)}"
                for f in files
            ]
        )
    head = ["approximation"] + [f"{f}: exact → approx, change [95% CI]" for f in files]
    print(table(f"Speed approximations, nDCG@10 ({machine()})", head, rows))


if __name__ == "__main__":
    main()
