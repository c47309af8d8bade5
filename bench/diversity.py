"""How much diversity a ranking no one has voted on can afford: no-vote nDCG@10 on both files.

Each query is ranked as a channel following it with no votes (`Ranker.rank`, size 10,
threshold 0) under each diversity setting; differences to "none" with paired-bootstrap 95%
intervals:  python -m bench.diversity
"""

from __future__ import annotations

import numpy as np

from bench.common import load_eval, load_query_files, machine, ndcg, paired_bootstrap, table
from bench.quality import fmt_ci
from digest.delivery.compose import DIVERSITY
from digest.rank import diversity as div
from digest.rank.index import build_index
from digest.rank.profile import Profile
from digest.rank.ranker import Ranker

SETTINGS = {  # name -> (MMR weight, near-duplicate cosine or None for the full trade-off)
    "none": (0.0, None),
    f"MMR {DIVERSITY} against every chosen paper (before)": (DIVERSITY, None),
    f"MMR {DIVERSITY}, near-duplicates only (cosine >= 0.9)": (DIVERSITY, 0.9),
    f"MMR {DIVERSITY}, near-duplicates only (cosine >= 0.8)": (DIVERSITY, 0.8),
    f"MMR {DIVERSITY}, near-duplicates only (cosine >= 0.7)": (DIVERSITY, 0.7),
}


def main() -> None:
    docs, _ = load_eval()
    ranker = Ranker(build_index(docs))
    ids = [d.id for d in docs]
    kept = div.NEAR_DUPLICATE
    for name, queries in load_query_files().items():
        got: dict[str, np.ndarray] = {}
        for setting, (weight, dup) in SETTINGS.items():
            div.NEAR_DUPLICATE = dup
            got[setting] = np.array(
                [
                    ndcg(
                        [
                            h.paper_id
                            for h in ranker.rank(
                                Profile(topics=(q["query"],)), ids, 10, 0.0, weight
                            ).hits
                        ],
                        set(q["relevant"]),
                    )
                    for q in queries
                ]
            )
        div.NEAR_DUPLICATE = kept
        base = got["none"]
        rows = [
            [s, v.mean(), "" if s == "none" else fmt_ci(*paired_bootstrap(v, base), signed=True)]
            for s, v in got.items()
        ]
        print(
            table(
                f"No-vote ranking, {name}.jsonl, {len(queries)} queries ({machine()})",
                ["diversity", "nDCG@10", "minus none [95% CI]"],
                rows,
            )
        )


if __name__ == "__main__":
    main()
