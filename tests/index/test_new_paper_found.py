"""A paper another process stores is found by a running bot (issue 21): by the words of its
title, which the corpus already uses, and by a word only it has, after one refresher round, after
the refit a running bot makes when due, and after a restart; ranked where a fresh fit puts it.

On both backends: two engines on one database, as `digestbot ingest` beside `digestbot run`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import digest.index.lifecycle as index_store
from digest.ingest.parse import make_record
from digest.papers.service import PaperService
from digest.rank.index import DocInput, build_index
from digest.rank.ranker import Ranker
from digest.store import Store
from tests.support.corpus import synthetic_records

WORD = "quorbliflex"  # no stored paper uses it


def ids(view) -> list[str]:
    return [h.paper_id for h in view.result.hits]


def rank_of(view, pid: str) -> int | None:
    found = ids(view)
    return found.index(pid) + 1 if pid in found else None


def test_a_paper_another_process_stores_is_found_by_its_title_and_by_its_own_word(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The running bot's service answers while a second engine stores a paper whose title is a
    stored paper's title (words common in the corpus) plus a word no paper has.

    Breaks that turn this red (each tried): a fit dropping words one paper uses
    (``build_index`` keeping only terms of two papers, as before: the word is lost at the refit
    and at the restart); the refresher not appending papers past the index's ingest sequence
    (``IndexStore._extend`` returning the snapshot as it was); appended papers weighted without
    the fitted idf (``add_documents`` passing ``np.ones_like(idf)`` to ``_bm25f``: the title
    ranks far below a fresh fit's place)."""
    bot_store = Store.open(db_url)
    other = Store.open(db_url)
    try:
        records = synthetic_records(per_topic=10)
        bot_store.papers.upsert(records)
        papers = PaperService(bot_store, tmp_path / "bot")
        papers.indexes.serving = True  # a running bot: answers from the index at hand
        papers.indexes.tick()
        fits: list[int] = []
        real = index_store.build_index
        monkeypatch.setattr(
            index_store, "build_index", lambda d, p=None: fits.append(1) or real(d, p)
        )

        known = records[0].title  # its words are in many stored papers' titles and abstracts
        other.papers.upsert(
            [
                make_record(
                    source="jsonl",
                    id="needle-1",
                    title=f"The {WORD} effect: {known}",
                    abstract=f"We describe the {WORD} effect. {records[0].abstract}",
                    year=2026,
                )
            ]
        )
        papers.indexes.tick()  # one refresher round (every REFRESH_SECONDS in a bot)
        assert not fits, "a new paper was indexed by a full fit, not appended"
        assert ids(papers.search(WORD))[:1] == ["needle-1"]
        served = rank_of(papers.search(known, per_page=5), "needle-1")

        # Where a fresh fit puts it: a restart, a process of its own with no saved index.
        restarted = PaperService(other, tmp_path / "restart")
        fresh = rank_of(restarted.search(known, per_page=5), "needle-1")
        assert fresh is not None and served is not None and abs(served - fresh) <= 1
        assert ids(restarted.search(WORD))[:1] == ["needle-1"]

        papers.indexes.invalidate()  # the refit a running bot makes when due, behind its answers
        papers.indexes.tick()
        assert fits, "no refit ran"
        assert ids(papers.search(WORD))[:1] == ["needle-1"]
        assert rank_of(papers.search(known, per_page=5), "needle-1") is not None
    finally:
        other.close()
        bot_store.close()


def test_a_word_one_paper_uses_is_kept_and_moves_no_other_score(corpus_records) -> None:
    """A fit keeps a word one paper alone uses (searchable), without changing any score of a
    query that does not use it: lengths count shared terms only, and a query word's family
    ('aggregation' -> 'aggregative') takes in shared terms only.

    Breaks that turn this red (each tried): words of one paper dropped by the fit (not found);
    a paper's BM25 length counting every column (its scores move); ``family`` built over every
    word (``families(vocab)``: 'aggregative', used once, pulls its paper up for 'secure
    aggregation')."""
    docs = [DocInput(r.id, r.title, r.abstract) for r in corpus_records]
    fl = next(i for i, r in enumerate(corpus_records) if "aggregation" not in r.abstract.lower())
    extra = list(docs)
    extra[fl] = DocInput(docs[fl].id, docs[fl].title, f"{docs[fl].abstract} {WORD} aggregative.")
    plain, grown = Ranker(build_index(docs)), Ranker(build_index(extra))

    assert [h.paper_id for h in grown.search(WORD).hits][:1] == [docs[fl].id]
    for q in ("secure aggregation", "message passing", "sparse autoencoders", "client drift"):
        a, b = plain.search(q, per_page=100), grown.search(q, per_page=100)
        assert [(h.paper_id, h.score) for h in a.hits] == [(h.paper_id, h.score) for h in b.hits]
        sa, sb = plain.state(q), grown.state(q)
        assert np.allclose(sa.lex, sb.lex, atol=1e-6), q
