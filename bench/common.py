"""Shared helpers for the benchmarks: evaluation data, metrics, baselines, table printing."""

from __future__ import annotations

import json
import math
import os
import platform
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import insert
from sqlalchemy.engine import Engine

from bench.models import model_key, query_vector
from digest.ingest.parse import make_record
from digest.rank.index import DocInput
from digest.store.schema import ChannelRow, SubscriptionRow

EVAL_DIR = Path(
    os.environ.get(
        "DIGESTBOT_EVAL_DIR",
        Path(__file__).resolve().parents[2] / "shared" / "eval" / "neurips2023",
    )
)


def load_eval(eval_dir: Path = EVAL_DIR) -> tuple[list[DocInput], list[dict]]:
    """Papers (title + clean abstract only: the labels come from keywords, so keywords stay out)."""
    docs = []
    for line in (eval_dir / "papers.jsonl").open():
        obj = json.loads(line)
        rec = make_record(
            source="jsonl", id=obj["id"], title=obj["title"], abstract=obj["abstract"]
        )
        docs.append(DocInput(rec.id, rec.title, rec.abstract, (), obj.get("venue"), 2023))
    queries = [json.loads(line) for line in (eval_dir / "queries.jsonl").open()]
    return docs, queries


QUERY_FILES = ("queries", "themes")  # keyword users and broad-theme users: report both


def load_query_files(eval_dir: Path = EVAL_DIR) -> dict[str, list[dict]]:
    """Both labelled query files of the development set, by name."""
    return {
        name: [json.loads(line) for line in (eval_dir / f"{name}.jsonl").open()]
        for name in QUERY_FILES
        if (eval_dir / f"{name}.jsonl").exists()
    }


def ndcg(ranked: list[str], relevant: set[str], k: int = 10) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, pid in enumerate(ranked[:k]) if pid in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal if ideal else 0.0


def precision(ranked: list[str], relevant: set[str], k: int = 10) -> float:
    return sum(pid in relevant for pid in ranked[:k]) / k


def average_precision(ranked: list[str], relevant: set[str], k: int = 100) -> float:
    hits, total = 0, 0.0
    for i, pid in enumerate(ranked[:k]):
        if pid in relevant:
            hits += 1
            total += hits / (i + 1)
    return total / min(len(relevant), k) if relevant else 0.0


def per_query(rank_fn, queries: list[dict]) -> np.ndarray:
    """Per-query (nDCG@10, P@10, MAP@100) of ``rank_fn(query) -> ids``, one row a query."""
    rows = []
    for q in queries:
        ranked, rel = rank_fn(q["query"]), set(q["relevant"])
        rows.append((ndcg(ranked, rel), precision(ranked, rel), average_precision(ranked, rel)))
    return np.array(rows, dtype=np.float64)


def evaluate(rank_fn, queries: list[dict]) -> dict[str, float]:
    """Mean nDCG@10, P@10, MAP@100 of ``rank_fn(query) -> ids``."""
    a = per_query(rank_fn, queries).mean(axis=0)
    return {"nDCG@10": a[0], "P@10": a[1], "MAP@100": a[2]}


def paired_bootstrap(
    a: np.ndarray, b: np.ndarray, n: int = 10_000, seed: int = 0
) -> tuple[float, float, float]:
    """Mean of ``a - b`` over queries and its 95% interval, resampling queries in pairs."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    idx = np.random.default_rng(seed).integers(0, len(d), size=(n, len(d)))
    means = d[idx].mean(axis=1)
    return float(d.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def ratio_interval(
    a: np.ndarray, b: np.ndarray, n: int = 10_000, seed: int = 0
) -> tuple[float, float, float]:
    """``mean(a) / mean(b)`` and its paired-bootstrap 95% interval."""
    idx = np.random.default_rng(seed).integers(0, len(a), size=(n, len(a)))
    ratios = a[idx].mean(axis=1) / np.maximum(b[idx].mean(axis=1), 1e-12)
    return (
        float(a.mean() / b.mean()),
        float(np.percentile(ratios, 2.5)),
        float(np.percentile(ratios, 97.5)),
    )


def top_ids(
    ids: list[str], rows_or_scores: np.ndarray, scores: np.ndarray | None = None, k: int = 100
) -> list[str]:
    """Ids of the ``k`` best: from (rows, scores) pairs, or from scores over all ids."""
    rows = rows_or_scores if scores is not None else np.arange(len(rows_or_scores))
    scores = rows_or_scores if scores is None else scores
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    return [ids[rows[i]] for i in top[np.argsort(-scores[top], kind="stable")]]


def tfidf_baseline(docs: list[DocInput]):
    """Plain TF-IDF cosine, answered the fast way: sum the query terms' columns of a CSC matrix.

    Multiplying the whole matrix by the query (56 ms at 100k papers) would flatter anything
    compared with it; the column sum gives the same scores in about a millisecond.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    from digest.rank.scorer import column_scores

    vec = TfidfVectorizer(sublinear_tf=True, stop_words="english", ngram_range=(1, 2), min_df=2)
    x = vec.fit_transform([f"{d.title} {d.abstract}" for d in docs]).tocsc()
    x.sort_indices()
    ids = [d.id for d in docs]

    def rank(q: str) -> list[str]:
        qv = vec.transform([q])
        return top_ids(ids, column_scores(x, qv.indices.astype(np.int64), qv.data)[0])

    return vec, x, rank


def bm25_baseline(docs: list[DocInput]):
    """bm25s with English stop words."""
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(
            [f"{d.title} {d.abstract}" for d in docs], stopwords="en", show_progress=False
        ),
        show_progress=False,
    )
    ids = [d.id for d in docs]

    def rank(q: str) -> list[str]:
        toks = bm25s.tokenize([q], stopwords="en", show_progress=False)
        res, _ = retriever.retrieve(toks, k=min(100, len(ids)), show_progress=False)
        return [ids[i] for i in res[0]]

    return retriever, rank


def seed_channels(
    engine: Engine,
    n: int,
    made: datetime,
    topics: Callable[[int], tuple[str, ...]],
    weekdays: str = "mon,tue,wed,thu,fri",
    **columns: Any,
) -> None:
    """``n`` console channels (c0, c1, ...) with a 09:00 UTC digest, made at ``made``, stored in
    one insert; the channel with database id ``cid`` follows ``topics(cid)``."""
    rows = [
        dict(platform="console", workspace="", channel_id=f"c{i}", timezone="UTC")
        | dict(digest_time="09:00", weekdays=weekdays, created_at=made, **columns)
        for i in range(n)
    ]
    with engine.begin() as conn:
        conn.execute(insert(ChannelRow), rows)
        ids = [r.id for r in conn.execute(ChannelRow.__table__.select())]
        subs = [
            dict(channel_id=cid, kind="topic", text=t, created_at=made)
            for cid in ids
            for t in topics(cid)
        ]
        conn.execute(insert(SubscriptionRow), subs)


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {date.today()}"


def table(title: str, header: list[str], rows: list[list]) -> str:
    """A Markdown table."""

    def fmt(v):
        return f"{v:.4f}" if isinstance(v, float) else str(v)

    lines = [f"### {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def dense_vectors(docs: list[DocInput], encoder) -> np.ndarray:
    """Sentence embeddings of the evaluation papers, cached on disk (about 7 minutes to compute)."""
    import hashlib

    from digest.index.embeddings import paper_text

    key = hashlib.sha1("".join(d.id for d in docs).encode()).hexdigest()[:12]
    name = "dense" if model_key(encoder) == "minilm" else f"dense-{model_key(encoder)}"
    cache = (
        Path(os.environ.get("DIGESTBOT_BENCH_CACHE", "/tmp/digestbot-bench")) / f"{name}-{key}.npy"
    )
    if cache.exists():
        return np.load(cache)
    vecs = encoder.encode([paper_text(d.title, d.abstract) for d in docs])
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.save(cache, vecs)
    return vecs


def digestbot_rank(index, encoder=None, score_params=None, semantic_params=None):
    """digestbot's ranking of a query as search sees it: lexical, or fused with meaning."""
    from digest.rank.scorer import compile_query, score, topic_state

    def rank(q: str) -> list[str]:
        cq = compile_query(index, q, score_params)
        if cq is None:
            return []
        qvec = query_vector(encoder, q) if encoder is not None else None
        state = topic_state(index, cq, score_params, qvec, semantic_params)
        return top_ids(index.ids, *score(index, state, p=score_params))

    return rank


def dense_rank(ids: list[str], vectors: np.ndarray, encoder):
    """Dense retrieval alone: cosine of the model's vectors."""
    return lambda q: top_ids(ids, vectors @ query_vector(encoder, q))
