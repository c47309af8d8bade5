"""Embedding happens in worker processes that claim papers in the database, never in the bot's.

Real child processes (spawned, as the bot starts its worker) run a stand-in encoder that logs
every text it embeds with its process id to one file, so each paper's embeddings are counted
across every process.

Breaks that turn these red:
- `IndexStore.embed_new` embedding in the bot's process when ``background`` is set (a running
  bot's ingest): the bot's encoder sees paper texts;
- `EmbeddingRepo.claim` ignoring live claims, or inserting a claim for a paper another worker
  has just stored: a paper is embedded by two processes (logged twice);
- the worker process not started, or not storing what it embeds: the bot never gets vectors.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter

import pytest

import digest.index.lifecycle as index_store
from bot.runtime.index_work import EmbeddingWorker
from digest.index.embeddings import ModelConfig, paper_text
from digest.papers.service import PaperService
from digest.store import Store
from tests.fakes.encoders import DELAY_ENV, LOG_ENV, HashEncoder, logged_lines
from tests.support.corpus import synthetic_records

STAND_IN = "tests.fakes.encoders:LoggedEncoder"
WAIT = 90  # seconds a worker may take (a spawned interpreter under load) before the test fails


@pytest.fixture
def embed_log(tmp_path, monkeypatch):
    path = str(tmp_path / "embedded.log")
    monkeypatch.setenv(LOG_ENV, path)  # spawned children inherit it
    monkeypatch.setenv(DELAY_ENV, "0.03")  # a chunk takes about a second, as the model's does
    return path


def _until(check, timeout: float = WAIT) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.2)
    return check()


def test_two_worker_processes_and_an_ingest_embed_each_paper_once(
    db_url, tmp_path, embed_log, monkeypatch
):
    """Two replicas' workers and a one-shot `digestbot ingest` (this process) on one database."""
    store = Store.open(db_url)
    monkeypatch.setattr(index_store, "load_encoder", lambda *a, **k: _logged())
    workers = [EmbeddingWorker(db_url, ModelConfig(), every=0.2, encoder=STAND_IN) for _ in "ab"]
    try:
        for w in workers:
            w.start()
        assert all(w.ready.wait(WAIT) for w in workers)  # both polling before work arrives
        records = synthetic_records(per_topic=25)
        store.papers.upsert(records[: len(records) // 2])
        ingest = PaperService(store, tmp_path / "index")  # embeds what it can claim
        store.papers.upsert(records[len(records) // 2 :])
        ingest.indexes.embed_new()
        assert _until(lambda: store.embeddings.progress("stand-in").embedded == len(records))
    finally:
        for w in workers:
            w.close()
    lines = logged_lines(embed_log)
    per_text = Counter(t for _, t in lines)
    assert len(per_text) == len(records) and set(per_text.values()) == {1}, per_text.most_common(3)
    assert len({pid for pid, _ in lines}) >= 2  # the work was shared out
    store.close()


def _logged():
    from tests.fakes.encoders import LoggedEncoder

    return LoggedEncoder()


def test_the_bot_process_embeds_nothing_while_an_ingest_embeds(tmp_path, embed_log, monkeypatch):
    """A running bot ingests (as its scheduled ingest does) and answers searches meanwhile; its
    worker process embeds every paper, and the bot ranks with those vectors."""
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    store = Store.open(url)
    bot_encoder = HashEncoder()  # the bot's own (query) encoder: it must see no paper
    monkeypatch.setattr(index_store, "load_encoder", lambda *a, **k: bot_encoder)
    papers = PaperService(store, tmp_path / "index", embeds=False)  # as a running bot's
    worker = EmbeddingWorker(url, ModelConfig(), every=0.2, encoder=STAND_IN)
    worker.start()
    try:
        recs = [
            {"id": r.id, "title": r.title, "abstract": r.abstract}
            for r in synthetic_records(per_topic=10)
        ]
        source = tmp_path / "feed.jsonl"
        source.write_text("\n".join(json.dumps(r) for r in recs), encoding="utf-8")
        papers.ingest(str(source))
        assert papers.search("graph neural networks").result.hits  # answers meanwhile
        assert _until(lambda: store.embeddings.progress("stand-in").embedded == len(recs))
    finally:
        worker.close()
    texts = {paper_text(r["title"], r["abstract"]) for r in recs}
    assert not texts & set(bot_encoder.calls), "the bot's process embedded papers"
    lines = logged_lines(embed_log)
    assert {pid for pid, _ in lines} - {os.getpid()} and os.getpid() not in {p for p, _ in lines}
    assert Counter(t for _, t in lines) == Counter(texts)  # each once, by the worker
    index = papers.ranker().index
    assert index.has_dense is not None and index.has_dense.all()
    store.close()
