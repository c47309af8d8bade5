"""The fitted index shared through the database: fitted once, appended as segments, merged.

Each replica here has its own Store (engine) and its own index folder, as replicas on separate
volumes or hosts have; they share nothing but the database. Run on SQLite and PostgreSQL.

Breaks that turn these red:
- no fit claim (IndexPartRepo.claim not asked before a fit): every replica fits;
- a replica refitting what another fitted (the stored base not loaded): fits > 1;
- a full-index rewrite per append (a base written for each batch of new papers): base parts
  multiply and each append writes as much as the whole index;
- a replica appending new papers itself instead of loading the segment another stored: its
  ``appends`` counter moves;
- the merge not adopted by a replica holding exactly what it folds: that replica reads the
  whole merged index again;
- a text change not shared (the text epoch not bumped): other replicas keep the stale fit.
"""

from __future__ import annotations

import json

import pytest

import digest.index.lifecycle as lifecycle
from digest.ingest.parse import make_record
from digest.papers.service import PaperService
from digest.rank.index import build_index
from digest.store import Store
from digest.store.index_parts import BASE
from tests.support.corpus import synthetic_records


def novel(n: int) -> object:
    word = f"zeolite{chr(97 + n % 26)}{chr(97 + n // 26)}"
    return make_record(
        source="jsonl",
        id=f"new-{n}",
        title=f"Message passing over {word} frameworks",
        abstract=f"Graph neural networks predict {word} framework stability with message passing.",
        year=2025,
    )


class Fits:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        monkeypatch.setattr(lifecycle, "build_index", self)

    def __call__(self, docs, params=None):
        self.count += 1
        return build_index(docs, params)


@pytest.fixture
def replicas(store, tmp_path):
    """Three replicas of a running bot: separate engines, separate index folders."""
    store.papers.upsert(synthetic_records(per_topic=10))
    url = store.engine.url.render_as_string(hide_password=False)
    stores = [store] + [Store.open(url, migrate=False) for _ in range(2)]
    services = [PaperService(s, tmp_path / f"index-{n}") for n, s in enumerate(stores)]
    for s in services:
        s.indexes.serving = True
    yield services
    for s in stores[1:]:
        s.close()


def bases(store: Store) -> list:
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from digest.store.schema import IndexPartRow

    with Session(store.engine) as session:
        return list(
            session.execute(
                select(IndexPartRow.id, IndexPartRow.size).where(IndexPartRow.kind == BASE)
            )
        )


def test_three_replicas_fit_once_and_the_others_load(replicas, monkeypatch):
    fits = Fits(monkeypatch)
    for r in replicas:
        r.indexes.tick()
    assert fits.count == 1
    assert [r.indexes.fits for r in replicas] == [1, 0, 0]
    assert [r.indexes.loads for r in replicas] == [0, 1, 1]
    assert all(len(r.indexes.index) == 76 for r in replicas)
    assert [h.paper_id for h in replicas[2].search("message passing").result.hits]


def test_appends_are_segments_written_once_and_loaded_by_the_others(replicas, monkeypatch):
    a, b, c = replicas
    for r in replicas:
        r.indexes.tick()
    fits = Fits(monkeypatch)
    (base_before,) = bases(a.store)
    writer = Store.open(a.store.engine.url.render_as_string(hide_password=False), migrate=False)
    for n in range(5):
        writer.papers.upsert([novel(n)])  # an ingest in another process
        for r in replicas:
            r.indexes.tick()
    writer.close()
    assert fits.count == 0
    assert bases(a.store) == [base_before]  # the fitted index is never rewritten by an append
    parts, size = a.store.index_parts.sizes(lifecycle.FORMAT)
    assert parts == 6 and size - base_before.size < base_before.size / 4  # 5 small segments
    assert a.indexes.appends == 5 and b.indexes.appends == 0 and c.indexes.appends == 0
    assert b.indexes.loads == 1 + 5 and c.indexes.loads == 1 + 5
    for r in replicas:
        assert [h.paper_id for h in r.search("zeoliteda").result.hits][:1] == ["new-3"]
        assert len(r.indexes.index) == 81


def test_a_merge_folds_the_segments_and_replicas_holding_them_do_not_reload(
    replicas, monkeypatch, tmp_path
):
    monkeypatch.setattr(lifecycle, "MERGE_SEGMENTS", 3)
    a, b, _ = replicas
    a.indexes.tick()
    b.indexes.tick()
    for n in range(3):
        a.store.papers.upsert([novel(n)])
        a.indexes.refresh()
        b.indexes.refresh()
    assert a.indexes.merge_if_due() and not b.indexes.merge_if_due()  # one merge, claimed
    loads = b.indexes.loads
    b.indexes.tick()
    assert b.indexes.loads == loads  # it holds exactly what the merge folds: adopted, not read
    assert len(bases(a.store)) == 2
    late = PaperService(a.store, tmp_path / "late")  # a replica started after the merge
    late.indexes.serving = True
    late.indexes.tick()
    assert late.indexes.loads == 1 and late.indexes.fits == 0  # one part: the merged base
    assert len(late.indexes.index) == 79 and "new-2" in late.indexes.index.pos


def test_a_text_change_in_one_replica_makes_each_refit_once_in_all(replicas, monkeypatch, tmp_path):
    a, b, c = replicas
    for r in replicas:
        r.indexes.tick()
    fits = Fits(monkeypatch)
    changed = next(iter(a.store.papers.iter_all()))
    feed = tmp_path / "changed.jsonl"
    feed.write_text(
        json.dumps(
            {"id": changed.id, "title": changed.title, "abstract": "Perovskite solar cells."}
        ),
        encoding="utf-8",
    )
    assert a.ingest(str(feed)).updated == 1
    for r in replicas:
        r.indexes.tick()
    assert fits.count == 1
    for r in replicas:
        assert [h.paper_id for h in r.search("perovskite").result.hits][:1] == [changed.id]
