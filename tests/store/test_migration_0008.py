"""Migration 0008: papers stored under versioned arXiv ids before 0006 become one paper per id.

Rows are written as the code before 0006 stored them (a JSONL id kept as given, no arxiv_id),
on a database migrated to 0006 with alembic, then the database is upgraded to the head.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import sqlalchemy as sa

from digest.ingest.pipeline import ingest
from digest.store import Store
from digest.store.database import make_engine, upgrade
from digest.text.bibtex import export, make_key
from digest.text.hashes import content_hash, normalize_title

V1 = "The first version: we count sheep with a convolutional network on farm images."
V2 = "The second version: we count sheep and goats with a vision transformer on farm video."
V5A = "Tractors, measured: an old text of a paper about farm machinery fleets."
V5B = "Tractors, measured again: a revised text of a paper about farm machinery fleets at scale."
NOW = datetime(2026, 11, 1, 12, tzinfo=UTC)


def _paper(pid: str, title: str, abstract: str, seq: int, **extra) -> dict:
    row = dict(id=pid, source="jsonl", title=title, title_derived=False)
    row |= dict(title_key=normalize_title(title), abstract_raw=abstract, abstract=abstract)
    row |= dict(authors=["Ada Lovelace"], keywords=[], ingested_at=NOW, seq=seq)
    return row | dict(content_hash=content_hash(abstract), published=date(2026, 10, 1)) | extra


PAPERS = [
    _paper("2611.00002v1", "Counting Sheep", V1, 1),
    _paper("2611.00002v2", "Counting Sheep and Goats", V2, 2),
    _paper("2611.00005", "Tractors", V5A, 3, source="arxiv", arxiv_id="2611.00005"),
    _paper("arXiv:2611.00005v3", "Tractors", V5B, 4, published=date(2026, 10, 9)),
    _paper("2611.00009v2", "Wool", "About wool.", 5),
    _paper("lab/2023001", "Lab notes", "Not an arXiv paper.", 6),
    _paper("2611.00007", "Fences", "About fences.", 7),
]


def _legacy_database(db_url: str) -> sa.Engine:
    """A database at revision 0006 holding rows, votes and deliveries as stored before it."""
    engine = make_engine(db_url)
    upgrade(engine, "0006")
    meta = sa.MetaData()
    t = {
        n: sa.Table(n, meta, autoload_with=engine)
        for n in (
            "papers",
            "channels",
            "deliveries",
            "delivery_items",
            "delivery_messages",
            "feedback",
            "subscriptions",
        )
    }
    channel = dict(id=1, platform="console", workspace="", channel_id="lab", name="lab")
    channel |= dict(timezone="UTC", digest_time="09:00", weekdays="mon", digest_size=5)
    channel |= dict(threshold=0.3, paused=False, quiet_when_empty=False, threaded=False)
    channel |= dict(backlog=True, admin_only=False, created_at=NOW)
    day = dict(channel_id=1, status="posted", claimed_by="w", claimed_at=NOW, near_misses=0)
    day |= dict(fence=1, attempts=0)
    vote = dict(channel_id=1, created_at=NOW)
    with engine.begin() as conn:
        conn.execute(t["papers"].insert(), PAPERS)
        conn.execute(t["channels"].insert(), [channel])
        conn.execute(
            t["deliveries"].insert(),
            [
                day | dict(id=1, digest_date=date(2026, 11, 20)),
                day | dict(id=2, digest_date=date(2026, 11, 21)),
            ],
        )
        item = dict(channel_id=1, score=0.5, why="sheep", position=0)
        conn.execute(
            t["delivery_items"].insert(),
            [
                item | dict(id=1, delivery_id=1, paper_id="2611.00002v1", rank=1),
                item | dict(id=2, delivery_id=2, paper_id="2611.00002v2", rank=1),
                item | dict(id=3, delivery_id=2, paper_id="lab/2023001", rank=2),
            ],
        )
        msg = dict(position=0, status="confirmed")
        conn.execute(
            t["delivery_messages"].insert(),
            [
                msg | dict(delivery_id=1, paper_ids=["2611.00002v1"]),
                msg | dict(delivery_id=2, paper_ids=["2611.00002v2", "lab/2023001"]),
            ],
        )
        conn.execute(
            t["feedback"].insert(),
            [
                vote | dict(id=1, user="ann", paper_id="2611.00002v1", value=1),
                vote | dict(id=2, user="ann", paper_id="2611.00002v2", value=-1),  # her newer vote
                vote | dict(id=3, user="bob", paper_id="arXiv:2611.00005v3", value=1),
            ],
        )
        conn.execute(
            t["subscriptions"].insert(),
            [
                vote | dict(kind="like", text=text)
                for text in ("2611.00002v1", "2611.00002v2", "2611.00009v2")
            ],
        )
    return engine


def _rows(engine: sa.Engine, sql: str) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.text(sql))]


def test_versioned_ids_become_one_paper_and_keep_their_votes_and_deliveries(db_url, tmp_path):
    """Breaks that turn this red: no 0008 (or an empty upgrade): the versioned rows stay;
    fold left out (v1's text stays on 2611.00002, C keeps its old text); the later-stored row
    taken as the stored one (the paper gets v2's ingest number 2, not 1); the older vote kept
    instead of the newer (_newest_vote ranking the other way); the second delivery's item kept
    instead of the first; `like:` subscriptions or ledger messages not repointed; rows deleted
    before their references move (_repoint skipped: the ON DELETE CASCADE drops the votes)."""
    engine = _legacy_database(db_url)
    store = Store(engine)
    upgrade(engine)
    papers = _rows(engine, "SELECT id, arxiv_id, arxiv_version, abstract, seq FROM papers")
    assert sorted(papers) == [
        ("2611.00002", "2611.00002", 2, V2, 1),
        ("2611.00005", "2611.00005", 3, V5B, 3),
        ("2611.00007", "2611.00007", None, "About fences.", 7),
        ("2611.00009", "2611.00009", 2, "About wool.", 5),
        ("lab/2023001", None, None, "Not an arXiv paper.", 6),
    ]
    assert store.papers.get("2611.00002").title == "Counting Sheep and Goats"
    votes = _rows(engine, 'SELECT "user", paper_id, value FROM feedback ORDER BY "user"')
    assert votes == [("ann", "2611.00002", -1), ("bob", "2611.00005", 1)]
    items = _rows(engine, "SELECT delivery_id, paper_id FROM delivery_items ORDER BY id")
    assert items == [(1, "2611.00002"), (2, "lab/2023001")]
    ledger = _rows(engine, "SELECT paper_ids FROM delivery_messages ORDER BY delivery_id")
    as_lists = [json.loads(ids) if isinstance(ids, str) else ids for (ids,) in ledger]
    assert as_lists == [["2611.00002"], ["2611.00002", "lab/2023001"]]
    likes = _rows(engine, "SELECT text FROM subscriptions ORDER BY text")
    assert likes == [("2611.00002",), ("2611.00009",)]
    engine.dispose()


def test_after_0008_ingest_sees_the_migrated_paper_as_the_one_it_would_have_stored(
    db_url, tmp_path
):
    """The JSONL lines of those rows, read again, add nothing; read into an empty database by
    today's code they give the same paper the migration made (id, title, text, version).
    Breaks that turn this red: arxiv_id left empty on a renamed row (the arxiv.org link line
    below is stored as a second paper); no 0008 (every line is added again)."""
    engine = _legacy_database(db_url)
    upgrade(engine)
    lines = [
        {"id": "2611.00002v1", "title": "Counting Sheep", "abstract": V1},
        {"id": "2611.00002v2", "title": "Counting Sheep and Goats", "abstract": V2},
        {
            "id": "wool",
            "title": "Wool!",
            "abstract": "x",
            "url": "https://arxiv.org/abs/2611.00009",
        },
    ]
    path = tmp_path / "again.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = ingest(Store(engine), str(path))
    assert report.added == 0
    fresh = Store.open(f"sqlite:///{tmp_path / 'fresh.db'}")
    ingest(fresh, str(path))
    cols = "id, title, abstract, arxiv_version"
    where = "WHERE id = '2611.00002'"
    assert _rows(engine, f"SELECT {cols} FROM papers {where}") == _rows(
        fresh.engine, f"SELECT {cols} FROM papers {where}"
    )
    engine.dispose()


def test_a_revote_kept_in_its_old_row_is_still_the_newer_vote(db_url):
    """A vote changed in place (set_feedback keeps the row id, renews created_at) beats a later
    row cast before it: ann's +1 on v1 (row 1, re-cast on day 5) wins over her -1 on v2 (row 2,
    day 1). Breaks that turn this red: _newest_vote ranking by row id alone (the -1 stays);
    _repoint skipped (the votes cascade away with the removed rows)."""
    engine = _legacy_database(db_url)
    feedback = sa.Table("feedback", sa.MetaData(), autoload_with=engine)
    with engine.begin() as conn:
        for vid, day in ((1, 5), (2, 1)):
            when = datetime(2026, 11, day, 12, tzinfo=UTC)
            conn.execute(feedback.update().where(feedback.c.id == vid).values(created_at=when))
    upgrade(engine)
    votes = _rows(engine, 'SELECT "user", paper_id, value FROM feedback ORDER BY "user"')
    assert votes == [("ann", "2611.00002", 1), ("bob", "2611.00005", 1)]
    engine.dispose()


def test_a_renamed_paper_keeps_the_cite_key_its_export_showed(db_url):
    """Before the migrations an export keyed each paper by its stored id (``2611.00009v2``); after
    them the renamed paper ``2611.00009`` exports that same key, and two versions folded into one
    paper keep the earlier-stored version's key. Breaks that turn this red: the cite-key
    backfill running after the renames (it hashes the new id: another key); settle dropping
    the cite_key column when it stores a renamed row (the export makes a key afresh)."""
    engine = _legacy_database(db_url)
    shown = {
        p["id"]: make_key(p["id"], p["title"], p["authors"], None)
        for p in PAPERS
        if p["id"] in ("2611.00009v2", "2611.00002v1")
    }
    upgrade(engine)
    papers = Store(engine).papers
    wool, sheep = papers.get("2611.00009"), papers.get("2611.00002")
    assert shown["2611.00009v2"] != make_key(wool.id, wool.title, wool.authors, None)
    assert f"{{{shown['2611.00009v2']}," in export([wool])
    assert f"{{{shown['2611.00002v1']}," in export([sheep])
    engine.dispose()
