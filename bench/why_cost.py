"""What the ten why-lines of a search page cost, on one index, interleaved with ranking alone.

    python -m bench.why_cost --size 100000            # CPU ms per search, page vs ranking only
    python -m bench.why_cost --size 100000 --profile  # cProfile of the page searches, top functions
    python -m bench.why_cost --size 100000 --dump F   # write every why-line (to compare two commits)

Same corpus, queries and fresh-ranker timing as `bench.speed`; both kinds of search alternate
query by query in one process, so neighbours on a shared machine weigh on both alike.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time

import numpy as np

from bench.speed import best_ms, synthetic
from digest.rank.index import IndexParams, build_index
from digest.rank.ranker import Ranker


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3, help="passes over the 200 queries")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--dump", help="write the 200 pages' why-lines (JSON) to this file")
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    docs, pool = synthetic(args.size)
    index = build_index(docs, IndexParams(workers=1))
    queries = pool[:200]
    fresh = lambda: Ranker(index)  # noqa: E731 - no topic cache, as in bench.speed
    if args.dump:
        pages = {q: [(h.paper_id, h.score, h.why) for h in fresh().search(q).hits] for q in queries}
        with open(args.dump, "w", encoding="utf-8") as f:
            json.dump(pages, f, ensure_ascii=False, indent=0)
        print(f"wrote {len(pages)} pages to {args.dump}")
    if args.profile:
        prof = cProfile.Profile()
        for q in queries:
            r = fresh()
            prof.enable()  # the whole search: ranking's per-query overhead shows up too
            r.search(q, per_page=10)
            prof.disable()
        pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(25)
    page, bare = np.full(len(queries), np.inf), np.full(len(queries), np.inf)
    for _ in range(args.rounds):
        for i, q in enumerate(queries):
            page[i] = min(page[i], best_ms(fresh, lambda r, q=q: r.search(q, per_page=10)))
            bare[i] = min(
                bare[i], best_ms(fresh, lambda r, q=q: r.search(q, per_page=10, explain=False))
            )
    extra = page - bare
    print(
        f"{args.size:,} papers, {len(queries)} queries, best of {args.rounds}x3 CPU-timed runs: "
        f"page p50 {np.median(page):.3f} ms, ranking only p50 {np.median(bare):.3f} ms, "
        f"why-lines (page - ranking, per query) p50 {np.median(extra):.3f} ms, "
        f"mean {extra.mean():.3f} ms; load {time.strftime('%H:%M')} "
        + " / ".join(f"{x:.1f}" for x in __import__("os").getloadavg())
    )


if __name__ == "__main__":
    main()
