"""Speed and memory at 10k, 100k and 1M papers (synthetic corpus built from the evaluation abstracts).

Each (size, system) runs in its own process so peak RSS is that system's alone:
    python -m bench.speed                 # full table (10k and 100k)
    python -m bench.speed --sizes 10000   # quicker
    python -m bench.speed --sizes 1000000 --kinds ours,tfidf,bm25 --mem-limit-gb 14
Each query is timed REPEAT times (a fresh ranker each time) and its fastest run counts, for every
system alike: on a shared machine the slower runs measure the neighbours, not the query.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.common import bm25_baseline, load_eval, machine, table, tfidf_baseline
from digest.rank.index import DocInput, IndexParams, build_index
from digest.rank.profile import Profile
from digest.rank.ranker import Ranker

# CPU time of this process, not wall time: the benchmark machine is shared (load averages of 10+
# were seen), and CPU seconds are what a query or a build costs whoever else is running.
clock = time.process_time
REPEAT = 3


def best_ms(setup: Callable[[], object], run: Callable[[object], object]) -> float:
    """Fastest of REPEAT CPU-timed runs of ``run(setup())`` (setup not timed), in ms."""
    best = float("inf")
    for _ in range(REPEAT):
        obj = setup()
        t = clock()
        run(obj)
        best = min(best, (clock() - t) * 1000)
    return best


def synthetic(n: int, seed: int = 3) -> tuple[list[DocInput], list[str]]:
    """``n`` papers whose abstracts mix sentences of the evaluation abstracts; topic queries."""
    docs, queries = load_eval()
    rng = random.Random(seed)
    sentences = [s for d in docs for s in re.split(r"(?<=\.)\s+", d.abstract) if len(s) > 30]
    out = []
    for i in range(n):
        base = docs[i % len(docs)]
        text = " ".join(rng.sample(sentences, rng.randint(5, 9)))
        out.append(
            DocInput(
                f"p{i}",
                f"{base.title} ({i // len(docs)})",
                text,
                (f"Author {i % 5000}",),
                "Venue",
                2026,
            )
        )
    texts = [q["query"] for q in queries]
    pool = texts + [f"{a} {b}" for a, b in zip(texts, texts[1:] + texts[:1], strict=True)]
    return out, pool


def percentiles(ms: list[float]) -> tuple[float, float]:
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 99))


def ours(docs: list[DocInput], pool: list[str]) -> dict:
    t0 = clock()
    index = build_index(docs, IndexParams(workers=1))  # one process: its CPU time is all of it
    build = clock() - t0
    fresh = lambda: Ranker(index)  # noqa: E731 - no topic cache: every search pays full price
    lat = [best_ms(fresh, lambda r, q=q: r.search(q, per_page=10)) for q in pool[:200]]
    bare = [
        best_ms(fresh, lambda r, q=q: r.search(q, per_page=10, explain=False)) for q in pool[:200]
    ]
    new = [d.id for d in docs[-1000:]]
    rng = random.Random(5)
    one = []
    for _ in range(100):
        ranker = Ranker(index)
        profile = Profile(topics=tuple(rng.sample(pool, 3)))
        t = clock()
        ranker.rank(profile, new, size=5)
        one.append((clock() - t) * 1000)
    fb = []
    for k, q in enumerate(pool[:50]):  # a reaction arrives: refit the feedback model, re-rank
        liked = docs[k * 7 : k * 7 + 20]
        votes = tuple((d.id, 1 if i % 3 else -1) for i, d in enumerate(liked))
        ranker = Ranker(index)
        ranker.state(q)  # the topic itself was already scored earlier that day
        t = clock()
        ranker.rank(Profile(topics=(q,), votes=votes), new, size=5)
        fb.append((clock() - t) * 1000)
    shared = Ranker(index)
    t = clock()
    for _ in range(2_000):  # 2,000 channels, scaled to 10,000 (keeps the run short)
        shared.rank(Profile(topics=tuple(rng.sample(pool, 3))), new, size=5)
    many = (clock() - t) * 5
    return {
        "build_s": build,
        "search": percentiles(lat),
        "ranking": percentiles(bare),
        "channel_ms": percentiles(one)[0],
        "channels_10k_s": many,
        "feedback_ms": percentiles(fb),
    }


def semantic(docs: list[DocInput], pool: list[str]) -> dict:
    """Search with meaning on: the query is encoded per search (vectors are stand-ins: at 100k
    papers real ones would take hours to compute here, and their values do not change the cost)."""
    from bench.common import dense_vectors
    from digest.index.embeddings import load_encoder

    encoder = load_encoder()
    base_docs, _ = load_eval()
    real = dense_vectors(base_docs, encoder)
    t0 = clock()
    index = build_index(docs, IndexParams(workers=1))
    build = clock() - t0
    index.dense = stand_ins(real, len(docs))
    index.has_dense = np.ones(len(docs), dtype=bool)
    lat, enc = [], []
    long_pool = [f"{a} and {b} in practice" for a, b in zip(pool, pool[7:], strict=False)]
    fresh = lambda: Ranker(index, encoder=encoder)  # noqa: E731
    for q in long_pool[:200]:  # descriptive queries: meaning gets its full share
        lat.append(best_ms(fresh, lambda r, q=q: r.search(q, per_page=10)))
        enc.append(best_ms(lambda: None, lambda _, q=q: encoder.encode([q])))
    return {"build_s": build, "search": percentiles(lat), "encode_ms": percentiles(enc)}


def stand_ins(real: np.ndarray, n: int, chunk: int = 50_000) -> np.ndarray:
    """``n`` unit float32 vectors near the real ones (made in chunks: no float64 n x 384 copy)."""
    rng = np.random.default_rng(0)
    out = np.empty((n, real.shape[1]), dtype=np.float32)
    for i in range(0, n, chunk):
        v = real[np.arange(i, min(n, i + chunk)) % len(real)]
        v = v + rng.normal(0, 0.02, v.shape).astype(np.float32)
        out[i : i + len(v)] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def baseline(kind: str, docs: list[DocInput], pool: list[str]) -> dict:
    t0 = clock()
    rank = tfidf_baseline(docs)[2] if kind == "tfidf" else bm25_baseline(docs)[1]
    build = clock() - t0
    lat = [best_ms(lambda: None, lambda _, q=q: rank(q)) for q in pool[:200]]
    return {"build_s": build, "search": percentiles(lat)}


def child(size: int, kind: str) -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # one BLAS thread: CPU time is then the cost of one query or build
    docs, pool = synthetic(size)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if kind == "ours":
        result = ours(docs, pool)
    elif kind == "semantic":
        result = semantic(docs, pool)
    else:
        result = baseline(kind, docs, pool)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["corpus_rss_mb"] = base_rss / 1024
    print(json.dumps(result))


NAMES = {
    "ours": "digestbot",
    "semantic": "digestbot + semantic",
    "tfidf": "TF-IDF (column sum)",
    "bm25": "BM25 (bm25s)",
}
HEADER = [
    "papers",
    "system",
    "index build s",
    "search p50 ms (page with why-lines)",
    "search p99 ms",
    "ranking only p50 / p99 ms",
    "1 channel / 1,000 new ms",
    "10,000 channels s",
    "re-rank after 👍 p50 / p99 ms",
    "peak RSS MB",
]


def run_child(size: int, kind: str, mem_gb: float | None) -> tuple[dict | None, float]:
    """(result or None if it failed, highest RSS seen in MB), watching the child's memory."""

    def limit() -> None:
        if mem_gb:  # a shared machine: a system that does not fit fails alone, not the machine
            cap = int(mem_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    cmd = [sys.executable, "-m", "bench.speed", "--child", str(size), kind]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, preexec_fn=limit)
    status, seen = Path(f"/proc/{proc.pid}/status"), 0.0
    while proc.poll() is None:
        try:
            hwm = [ln for ln in status.read_text().splitlines() if ln.startswith("VmHWM")]
            seen = max(seen, int(hwm[0].split()[1]) / 1024) if hwm else seen
        except OSError:
            pass
        time.sleep(0.5)
    out = proc.stdout.read().strip().splitlines() if proc.stdout else []
    return (json.loads(out[-1]) if proc.returncode == 0 and out else None), seen


def row(size: int, kind: str, r: dict | None, seen: float) -> list[str]:
    """One table row; a run that failed says so with the memory it had reached."""
    if r is None:
        return [f"{size:,}", NAMES[kind], f"failed (out of memory or killed at {seen:,.0f} MB)"] + [
            "n/a"
        ] * (len(HEADER) - 3)
    pair = lambda v: f"{v[0]:.1f} / {v[1]:.1f}"  # noqa: E731
    rank = r.get("ranking", r["search"] if kind in ("tfidf", "bm25") else None)
    return [
        f"{size:,}",
        NAMES[kind],
        f"{r['build_s']:.1f}",
        f"{r['search'][0]:.2f}",
        f"{r['search'][1]:.2f}",
        f"{rank[0]:.2f} / {rank[1]:.2f}" if rank else "n/a",
        f"{r['channel_ms']:.2f}" if "channel_ms" in r else "n/a",
        f"{r['channels_10k_s']:.1f}" if "channels_10k_s" in r else "n/a",
        pair(r["feedback_ms"])
        if "feedback_ms" in r
        else f"encode {pair(r['encode_ms'])}"
        if "encode_ms" in r
        else "n/a",
        f"{r['peak_rss_mb']:.0f} (corpus {r['corpus_rss_mb']:.0f})",
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--kinds", default="ours,semantic,tfidf,bm25")
    ap.add_argument("--mem-limit-gb", type=float, default=None)
    ap.add_argument("--child", nargs=2)
    args = ap.parse_args()
    if args.child:
        child(int(args.child[0]), args.child[1])
        return
    from digest.index.embeddings import semantic_available

    kinds = [k for k in args.kinds.split(",") if k != "semantic" or semantic_available()]
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        for kind in kinds:  # one process at a time: the machine is shared
            rows.append(row(size, kind, *run_child(size, kind, args.mem_limit_gb)))
            print(rows[-1], file=sys.stderr, flush=True)
    print(table(f"Speed ({machine()}, load average {load()})", HEADER, rows))


def load() -> str:
    """The 1/5/15-minute load averages now (the machine is shared; CPU time still counts)."""
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
