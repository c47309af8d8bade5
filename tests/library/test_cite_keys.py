"""A paper's BibTeX key is issued when it is first stored and never changes after that."""

from __future__ import annotations

import re

import sqlalchemy as sa

from digest.ingest.parse import make_record
from digest.store import Store
from digest.store.database import make_engine, upgrade
from digest.store.paper_rows import issue_key
from digest.text.bibtex import export, make_key
from digest.text.hashes import content_hash, normalize_title

ABSTRACT = (
    "Temporal graph transformers forecast traffic on road networks. We train them on ten cities "
    "and show they beat recurrent baselines at every horizon."
)


def _key(bib: str) -> str:
    return re.findall(r"^@\w+\{([^,]+),", bib, re.M)[0]


def test_a_real_title_or_authors_arriving_later_keep_the_key_already_issued(store):
    """A paper stored without a title (a generated headline) and without authors is exported;
    its real title and authors arrive later; its key stays the one a user may have pasted.
    Breaks that turn this red: cite_key making the key from the current title and authors
    again (the key turns from the headline's words to 'lovelace2026sparse-…'); the store not
    issuing a key (PaperRepo._absorb without issue_key); to_paper not reading the stored key."""
    first = make_record(source="jsonl", id="lab-7", abstract=ABSTRACT, year=2026)
    store.papers.upsert([first])
    before = _key(export([store.papers.get("lab-7")]))
    assert store.papers.get("lab-7").title_derived
    real = make_record(
        source="jsonl",
        id="lab-7",
        title="Sparse autoencoders for traffic",
        abstract=ABSTRACT,
        authors=["Ada Lovelace"],
        year=2026,
    )
    store.papers.upsert([real])
    paper = store.papers.get("lab-7")
    assert (paper.title, paper.title_derived) == ("Sparse autoencoders for traffic", False)
    assert _key(export([paper])) == before
    assert before != make_key(paper.id, paper.title, paper.authors, paper.year)


def test_a_key_issued_once_is_never_issued_to_another_paper():
    """Two papers whose short keys are alike: the second gets a longer tag, the first keeps its.
    Breaks that turn this red: issue_key ignoring the keys already issued."""

    class Row:
        id, title, authors, year = "x1", "Sparse autoencoders", ["Ada Lovelace"], 2026

    short = make_key("x1", Row.title, Row.authors, 2026)
    taken = {short}
    issued = issue_key(Row, taken)
    assert issued != short and issued.startswith(short) and issued in taken


def test_migration_0007_gives_stored_papers_the_key_exports_gave_them(db_url):
    """Papers stored before 0007 keep the key their last export showed (made from their data then).
    Breaks that turn this red: 0007 adding the column without filling it (exports then keep
    making keys from the title, which changes); the backfill using another key recipe."""
    engine = make_engine(db_url)
    upgrade(engine, "0006")
    papers = sa.Table("papers", sa.MetaData(), autoload_with=engine)
    title = "Graph transformers for traffic"
    row = dict(id="lab-9", source="jsonl", title=title, title_derived=False, abstract=ABSTRACT)
    row |= dict(title_key=normalize_title(title), abstract_raw=ABSTRACT, authors=["Alan Turing"])
    row |= dict(keywords=[], year=2026, content_hash=content_hash(ABSTRACT), seq=1)
    with engine.begin() as conn:
        conn.execute(papers.insert().values(row | {"ingested_at": sa.func.now()}))
    shown = make_key("lab-9", title, ["Alan Turing"], 2026)
    upgrade(engine)
    store = Store(engine)
    assert store.papers.get("lab-9").cite_key == shown
    revised = ABSTRACT + " Revised."
    real = make_record(source="jsonl", id="lab-9", title="Other words", abstract=revised)
    store.papers.upsert([real])
    assert store.papers.get("lab-9").title == "Other words"
    assert _key(export([store.papers.get("lab-9")])) == shown
    engine.dispose()
