"""The store on SQLite and PostgreSQL: merges across sources, migrations, connection errors."""

import pytest
from sqlalchemy import inspect

from digest.errors import StoreUnavailableError
from digest.ingest.parse import make_record
from digest.models import Links
from digest.store import Store
from digest.store.engine import upgrade

ABSTRACT = "We introduce a method for calibrating large models under distribution shift. " * 4


def test_migrations_create_every_table_and_rerun_safely(store):
    tables = set(inspect(store.engine).get_table_names())
    assert {
        "papers",
        "channels",
        "subscriptions",
        "deliveries",
        "delivery_items",
        "feedback",
        "alembic_version",
    } <= tables
    upgrade(store.engine)  # second run is a no-op, not an error


def test_arxiv_versions_are_one_paper(store):
    v1 = make_record(
        source="arxiv", id="2401.01234v1", title="Calibrating Models", abstract=ABSTRACT
    )
    v2 = make_record(
        source="arxiv", id="2401.01234v2", title="Calibrating Models", abstract=ABSTRACT + " v2"
    )
    counts = store.papers.upsert([v1, v2])
    assert (counts.added, store.papers.count()) == (1, 1)
    assert store.papers.get("2401.01234v2").id == "2401.01234"


def test_same_paper_from_arxiv_and_openreview_is_merged_with_both_links(store):
    arxiv = make_record(
        source="arxiv",
        id="2401.05555",
        title="Calibrating Large Models Under Shift",
        abstract=ABSTRACT,
        links=Links(pdf="https://arxiv.org/pdf/2401.05555", abs="https://arxiv.org/abs/2401.05555"),
    )
    openreview = make_record(
        source="openreview",
        id="OR123",
        title="Calibrating large models under shift.",
        abstract="A different, revised abstract for the camera-ready version of the paper." * 3,
        venue="NeurIPS 2026 poster",
        links=Links(forum="https://openreview.net/forum?id=OR123"),
    )
    store.papers.upsert([arxiv])
    counts = store.papers.upsert([openreview])
    assert (counts.added, counts.merged, store.papers.count()) == (0, 1, 1)
    paper = store.papers.get("2401.05555")
    assert paper.links.abs and paper.links.forum == "https://openreview.net/forum?id=OR123"
    assert paper.venue == "NeurIPS 2026 poster"


def test_real_title_replaces_derived_one(store):
    derived = make_record(source="neurips", abstract=ABSTRACT)
    assert derived.title_derived
    real = make_record(source="openreview", id="OR9", title="The Real Title", abstract=ABSTRACT)
    store.papers.upsert([derived])
    store.papers.upsert([real])
    (paper,) = store.papers.list()
    assert paper.title == "The Real Title" and not paper.title_derived


def test_short_identical_abstracts_do_not_merge_different_papers(store):
    a = make_record(source="jsonl", id="a", title="Paper A: Graphs", abstract="and More")
    b = make_record(source="jsonl", id="b", title="Paper B: Normals", abstract="and More")
    assert store.papers.upsert([a, b]).added == 2


def test_unreachable_database_is_one_clear_error():
    with pytest.raises(StoreUnavailableError, match="Cannot reach database"):
        Store.open("postgresql+psycopg://nobody@127.0.0.1:1/none")
    with pytest.raises(StoreUnavailableError, match="Invalid database URL"):
        Store.open("not a url")


def test_kv_delete_range_removes_only_keys_in_the_range(store):
    for key in ("pager.00a", "pager.00b", "pager.01a", "other"):
        store.kv.set(key, "x")
    assert store.kv.delete_range("pager.", "pager.01") == 2
    assert [store.kv.get(k) for k in ("pager.00a", "pager.01a", "other")] == [None, "x", "x"]
