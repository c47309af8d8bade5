"""Where `similar`'s "nothing is close" floor comes from: how alike related and unrelated papers
score, in both spaces `similar` uses (sentence embeddings when present, else LSA).

Pairs are taken from the library tasks (liked paper -> every other paper; related = shares the
task's keyword). For each score band it prints how many of a liked paper's top-5 neighbours fall
in it and what share of those are related, and what random pairs and a paper's nearest neighbour
score: the floor (digest/rank/profile.py) sits about where one random pair in twenty scores.

    python -m bench.similar_floor
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from bench.common import EVAL_DIR, load_eval, table


def bands(space: np.ndarray, ids: list[str], tasks: list[dict]) -> list[list]:
    pos = {p: i for i, p in enumerate(ids)}
    edges = [-1.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 1.01]
    hit = np.zeros(len(edges) - 1)
    rel = np.zeros(len(edges) - 1)
    tops = []
    base = []
    for t in tasks:
        related = {pos[p] for p in t["relevant"] + t["liked"] if p in pos}
        base.append(len(related) / len(ids))
        for p in t["liked"]:
            if p not in pos:
                continue
            sims = space @ space[pos[p]]
            sims[pos[p]] = -2
            top = np.argsort(-sims)[:5]
            tops.append(float(sims[top[0]]))
            for r in top:
                b = np.searchsorted(edges, sims[r], side="right") - 1
                hit[b] += 1
                rel[b] += r in related
    rows = [
        [f"{edges[i]:.1f}–{edges[i + 1]:.1f}", int(hit[i]), rel[i] / hit[i] if hit[i] else 0.0]
        for i in range(len(hit))
    ]
    rows.append(["chance (a random paper is related)", "", float(np.mean(base))])
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, len(ids), 20000), rng.integers(0, len(ids), 20000)
    pairs = np.einsum("ij,ij->i", space[a], space[b])[a != b]
    rows.append(
        [
            "random pairs, 50th / 95th / 99th percentile",
            "",
            " / ".join(f"{np.percentile(pairs, q):.2f}" for q in (50, 95, 99)),
        ]
    )
    rows.append(
        [
            "top-1 score, 5th / 50th percentile",
            "",
            f"{np.percentile(tops, 5):.2f} / {np.percentile(tops, 50):.2f}",
        ]
    )
    return rows


def main() -> None:
    from digest.rank.index import build_index

    docs, _ = load_eval()
    tasks = [json.loads(line) for line in (EVAL_DIR / "library.jsonl").open()]
    ids = [d.id for d in docs]
    index = build_index(docs)
    print(
        table(
            "LSA space", ["score", "top-5 neighbours", "related"], bands(index.latent, ids, tasks)
        )
    )
    # The sentence embeddings bench.common.dense_vectors cached (about 7 minutes to compute).
    cache = Path(os.environ.get("DIGESTBOT_BENCH_CACHE", "/tmp/digestbot-bench"))
    for path in sorted(cache.glob("dense-*.npy")):
        vecs = np.load(path)
        if len(vecs) == len(ids):
            print(
                table(
                    f"sentence embeddings ({path})",
                    ["score", "top-5 neighbours", "related"],
                    bands(vecs, ids, tasks),
                )
            )


if __name__ == "__main__":
    main()
