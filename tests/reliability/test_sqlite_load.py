"""SQLite under load: a 50,000-paper ingest while 10 threads keep searching."""

import json
import random
import threading
import time

import numpy as np

from digest.index.lifecycle import doc_input
from digest.ingest.pipeline import ingest
from digest.rank.index import build_index
from digest.rank.ranker import Ranker
from digest.store import Store
from tests.support.corpus import TOPICS, synthetic_records

WORDS = [w for phrases in TOPICS.values() for p in phrases for w in p.split()]


def write_corpus(path, n, seed=3):
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            words = rng.choices(WORDS, k=60)
            f.write(
                json.dumps(
                    {
                        "id": f"load-{i}",
                        "title": " ".join(rng.choices(WORDS, k=8)) + f" {i}",
                        "abstract": " ".join(words) + ".",
                        "authors": ["A. Author"],
                    }
                )
                + "\n"
            )


def test_ingest_of_50k_papers_while_ten_threads_search(tmp_path):
    url = f"sqlite:///{tmp_path / 'load.db'}"
    writer = Store.open(url)
    base = writer.papers.upsert(synthetic_records()).added
    ranker = Ranker(build_index([doc_input(p) for p in writer.papers.iter_all()]))
    corpus = tmp_path / "big.jsonl"
    write_corpus(corpus, 50_000)
    errors, latencies, done = [], [], threading.Event()

    def searcher(seed):
        reader = Store.open(url, migrate=False)  # its own engine, as another process would have
        rng = random.Random(seed)
        while not done.is_set():
            t = time.perf_counter()
            try:
                hits = ranker.search(
                    rng.choice(["diffusion models", "graph neural networks", "federated learning"])
                ).hits
                reader.papers.get_many(h.paper_id for h in hits)
                reader.papers.count()
            except Exception as exc:  # noqa: BLE001 - any failure is what this test looks for
                errors.append(repr(exc))
            latencies.append(time.perf_counter() - t)
            time.sleep(
                0.01
            )  # chat-like pacing; without it ten busy threads starve the ingest of the GIL
        reader.close()

    threads = [threading.Thread(target=searcher, args=(s,)) for s in range(10)]
    for t in threads:
        t.start()
    started = time.monotonic()
    report = ingest(writer, str(corpus))
    took = time.monotonic() - started
    done.set()
    for t in threads:
        t.join(timeout=30)
    p99 = float(np.percentile(latencies, 99)) * 1000
    print(
        f"\nsqlite load: ingested {report.added} papers in {took:.1f} s while 10 threads ran "
        f"{len(latencies)} searches (p99 {p99:.0f} ms), errors {len(errors)}"
    )
    assert report.added == 50_000 and writer.papers.count() == 50_000 + base
    assert errors == [] and len(latencies) > 100
    writer.close()
