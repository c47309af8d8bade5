"""Speed and memory at 10k and 100k papers (synthetic corpus built from the evaluation abstracts).

Each (size, system) runs in its own process so peak RSS is that system's alone:
    python -m bench.speed                 # full table (10k and 100k)
    python -m bench.speed --sizes 10000   # quicker
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import subprocess
import sys
import time

import numpy as np

from bench.common import bm25_baseline, load_eval, machine, table, tfidf_baseline
from digest.rank.engine import Ranker
from digest.rank.index import DocInput, IndexParams, build_index
from digest.rank.profile import Profile

# CPU time of this process, not wall time: the benchmark machine is shared (load averages of 10+
# were seen), and CPU seconds are what a query or a build costs whoever else is running.
clock = time.process_time


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
    lat = []
    for q in pool[:200]:
        ranker = Ranker(index)  # fresh: no topic cache, every search pays full price
        t = clock()
        ranker.search(q, per_page=10)
        lat.append((clock() - t) * 1000)
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
        "channel_ms": percentiles(one)[0],
        "channels_10k_s": many,
        "feedback_ms": percentiles(fb),
    }


def semantic(docs: list[DocInput], pool: list[str]) -> dict:
    """Search with meaning on: the query is encoded per search (vectors are stand-ins: at 100k
    papers real ones would take hours to compute here, and their values do not change the cost)."""
    from bench.common import dense_vectors
    from digest.embeddings import load_encoder

    encoder = load_encoder()
    base_docs, _ = load_eval()
    real = dense_vectors(base_docs, encoder)
    t0 = clock()
    index = build_index(docs, IndexParams(workers=1))
    build = clock() - t0
    rng = np.random.default_rng(0)
    vecs = real[np.arange(len(docs)) % len(real)] + rng.normal(0, 0.02, (len(docs), real.shape[1]))
    index.dense = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)
    index.has_dense = np.ones(len(docs), dtype=bool)
    lat, enc = [], []
    long_pool = [f"{a} and {b} in practice" for a, b in zip(pool, pool[7:], strict=False)]
    for q in long_pool[:200]:  # descriptive queries: meaning gets its full share
        ranker = Ranker(index, encoder=encoder)
        t = clock()
        ranker.search(q, per_page=10)
        lat.append((clock() - t) * 1000)
        t = clock()
        encoder.encode([q])
        enc.append((clock() - t) * 1000)
    return {"build_s": build, "search": percentiles(lat), "encode_ms": percentiles(enc)}


def baseline(kind: str, docs: list[DocInput], pool: list[str]) -> dict:
    t0 = clock()
    rank = tfidf_baseline(docs)[2] if kind == "tfidf" else bm25_baseline(docs)[1]
    build = clock() - t0
    lat = []
    for q in pool[:200]:
        t = clock()
        rank(q)
        lat.append((clock() - t) * 1000)
    return {"build_s": build, "search": percentiles(lat)}


def child(size: int, kind: str) -> None:
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--child", nargs=2)
    args = ap.parse_args()
    if args.child:
        child(int(args.child[0]), args.child[1])
        return
    rows = []
    names = {"ours": "digestbot", "semantic": "digestbot + semantic", "tfidf": "TF-IDF (column sum)",
             "bm25": "BM25 (bm25s)"}  # fmt: skip
    from digest.embeddings import semantic_available

    kinds = (
        ("ours", "semantic", "tfidf", "bm25") if semantic_available() else ("ours", "tfidf", "bm25")
    )
    for size in [int(s) for s in args.sizes.split(",")]:
        for kind in kinds:
            proc = subprocess.run([sys.executable, "-m", "bench.speed", "--child", str(size), kind],
                                  capture_output=True, text=True, check=True)  # fmt: skip
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            rows.append([
                f"{size:,}", names[kind], f"{r['build_s']:.1f}", f"{r['search'][0]:.2f}", f"{r['search'][1]:.2f}",
                f"{r['channel_ms']:.2f}" if "channel_ms" in r else "n/a",
                f"{r['channels_10k_s']:.1f}" if "channels_10k_s" in r else "n/a",
                f"{r['feedback_ms'][0]:.1f} / {r['feedback_ms'][1]:.1f}" if "feedback_ms" in r else
                f"encode {r['encode_ms'][0]:.1f} / {r['encode_ms'][1]:.1f}" if "encode_ms" in r else "n/a",
                f"{r['peak_rss_mb']:.0f} (corpus {r['corpus_rss_mb']:.0f})",
            ])  # fmt: skip
            print(rows[-1], file=sys.stderr, flush=True)
    print(table(f"Speed ({machine()})", ["papers", "system", "index build s", "search p50 ms", "search p99 ms",
                "1 channel / 1,000 new ms", "10,000 channels s", "re-rank after 👍 p50 / p99 ms", "peak RSS MB"], rows))  # fmt: skip


if __name__ == "__main__":
    main()
