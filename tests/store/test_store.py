"""The store on SQLite and PostgreSQL: merges across sources, migrations, connection errors."""

import pytest
from sqlalchemy import inspect

from digest.errors import StoreUnavailableError
from digest.ingest.parse import make_record
from digest.models import Links
from digest.store import Store
from digest.store.database import upgrade

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
        # The camera-ready abstract is a revision of the preprint's, not the same text.
        abstract=ABSTRACT.replace("We introduce", "We propose") + " Code is released.",
        venue="NeurIPS 2026 poster",
        links=Links(forum="https://openreview.net/forum?id=OR123"),
    )
    store.papers.upsert([arxiv])
    counts = store.papers.upsert([openreview])
    assert (counts.added, counts.merged, store.papers.count()) == (0, 1, 1)
    paper = store.papers.get("2401.05555")
    assert paper.links.abs and paper.links.forum == "https://openreview.net/forum?id=OR123"
    assert paper.venue == "NeurIPS 2026 poster"


def test_same_title_with_a_different_abstract_is_another_paper(store):
    """Two papers that share a normalised title but not their text are both stored, in one batch
    or across two ingests, and the stored one keeps its text (reviewer: x2 was dropped as
    "already stored"). Breaks that turn this red: Keys.find matching on the title alone (the
    pre-fix code); abstracts_agree returning True for any two abstracts; by_title keeping one id
    per title (the third record, a revision of the first, would be stored as a third paper)."""
    x1 = make_record(
        source="jsonl",
        id="x1",
        title="Attention is all you need again",
        abstract="First paper: transformers and attention for translation.",
    )
    x2 = make_record(
        source="jsonl",
        id="x2",
        title="Attention Is All You Need, Again!",
        abstract="A different paper by different authors about graph kernels.",
    )
    x3 = make_record(  # the first paper again under a third id, reworded: joins x1, not x2
        source="openreview",
        id="OR7",
        title="attention is all you need again",
        abstract="First paper: transformers and attention for translation, revised.",
        venue="ICLR 2027",
    )
    counts = store.papers.upsert([x1, x2])
    assert (counts.added, counts.unchanged, store.papers.count()) == (2, 0, 2)
    store.papers.upsert([x1])
    counts = store.papers.upsert([x3])
    assert (counts.added, counts.merged, store.papers.count()) == (0, 1, 2)
    assert store.papers.get("x1").abstract.startswith("First paper")
    assert store.papers.get("x1").venue == "ICLR 2027" and store.papers.get("x2").venue is None


def test_same_title_merges_when_one_side_has_no_abstract_but_not_two_arxiv_ids(store):
    """A title-only record joins the paper it names; two arXiv papers with one title stay two.
    Breaks that turn this red: abstracts_agree refusing an empty abstract; _compatible ignored."""
    full = make_record(
        source="jsonl", id="p1", title="Graph Kernels Revisited Today", abstract=ABSTRACT
    )
    bare = make_record(
        source="csv", id="p2", title="Graph kernels revisited today", abstract="", venue="KDD"
    )
    assert store.papers.upsert([full, bare]).merged == 1
    assert store.papers.count() == 1 and store.papers.get("p1").venue == "KDD"
    text = "Two arXiv papers with one title and the same short abstract."
    a = make_record(
        source="arxiv", id="2401.00001", title="One Title For Two Papers", abstract=text
    )
    b = make_record(
        source="arxiv", id="2401.00002", title="One title for two papers", abstract=text
    )
    assert store.papers.upsert([a, b]).added == 2


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


def test_migrations_form_one_chain_without_pending_rebase_notes():
    """Every revision has one head and no note says it still awaits a rebase onto another head.
    Breaks that turn this red: a second head (two revisions with one down_revision); the
    "must be rebased onto the newest head" note left in 0006_arxiv_version.py."""
    from pathlib import Path

    from alembic.config import Config
    from alembic.script import ScriptDirectory

    import digest.store

    folder = Path(digest.store.__file__).parent / "migrations"
    cfg = Config()
    cfg.set_main_option("script_location", str(folder))
    assert len(ScriptDirectory.from_config(cfg).get_heads()) == 1
    for path in (folder / "versions").glob("*.py"):
        assert "rebased onto the newest head" not in path.read_text(), path.name


def test_an_abstract_fills_a_title_only_paper_once_and_never_swallows_another_paper(store):
    """A record with an abstract whose title names a paper stored without one gives that paper the
    abstract (reported as updated, to embed again); a second record with another abstract under
    that title is then another paper; a record whose abstract agrees with a stored one joins it
    rather than filling a title-only namesake. Breaks that turn this red: _replaces not filling an
    empty abstract (the abstract thrown away: 0 added, 0 merged, 0 updated); abstracts_agree
    letting a filled paper take any abstract; Keys.find preferring the title-only candidate."""
    title = "Counting Sheep With Transformers"
    other = "A different study: we count sheep from drone footage with graph networks. " * 4
    bare = make_record(source="csv", id="x1", title=title, abstract="", venue="AAAI")
    full = make_record(source="jsonl", id="a1", title=title.upper(), abstract=ABSTRACT)
    store.papers.upsert([bare])
    counts = store.papers.upsert([full])
    assert (counts.added, counts.merged, counts.updated, counts.updated_ids) == (0, 0, 1, ["x1"])
    paper = store.papers.get("x1")
    assert (paper.abstract, paper.venue, store.papers.count()) == (ABSTRACT.strip(), "AAAI", 1)
    second = make_record(source="jsonl", id="b1", title=title, abstract=other)
    assert store.papers.upsert([second]).added == 1
    assert store.papers.get("x1").abstract == ABSTRACT.strip()
    assert store.papers.get("b1").abstract == other.strip()
    # Two namesakes kept apart by their arXiv ids: the one stored without an abstract comes first,
    # yet a record agreeing with the other's (short, so unhashed) abstract joins that other one.
    short = "We calibrate large models under distribution shift with a small held-out set."
    url = "https://arxiv.org/abs/2611.0002"
    t2 = "Calibration Under Shift Revisited"
    empty = make_record(source="csv", id="e", title=t2, abstract="", links=Links(abs=url + "0"))
    known = make_record(source="csv", id="k", title=t2, abstract=short, links=Links(abs=url + "1"))
    store.papers.upsert([empty, known])
    late = make_record(source="jsonl", id="j", title=t2, abstract=short + " Code is released.")
    counts = store.papers.upsert([late])
    assert (counts.added, counts.updated) == (0, 0)
    assert store.papers.get("e").abstract == ""
