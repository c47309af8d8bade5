"""Console crash recovery reads a transcript per database: channel ids repeat across databases.

Repro: two databases in one data folder, both with channel 1; a digest printed for database A
was taken as already posted on database B after a kill -9 there (12 papers lost). Breaks tried
on purpose (each turned a test red):
- one shared `console-transcript.log` again (bot/app.py);
- `Store.identity` made fresh per call / per process (uuid4 not stored): the same database,
  reopened, no longer finds what it printed.
An import must not carry the id either (an imported database would share it): asserted below.
"""

from __future__ import annotations

import asyncio

from bot.commands.replies import Reply
from digest.models import ChannelRef, SubscriptionKind
from digest.store import Store
from digest.transfer.portable import export_state, import_state
from tests.conftest import make_app

KEY = "digest-1-2026-12-01#0"  # the key recovery asks about: channel id 1 exists in both databases


def printed(app, key: str = KEY) -> bool:
    console = app.adapters["console"]
    ref = ChannelRef("console", "lab")
    return asyncio.run(console.find_part(ref, Reply(text=""), 0, key, None)) is not None


def post(app, key: str = KEY) -> None:
    console = app.adapters["console"]
    ref = ChannelRef("console", "lab")
    asyncio.run(console.post_part(ref, Reply(text="digest"), 0, key, None))


def test_a_digest_printed_for_one_database_is_not_posted_for_another(tmp_path):
    a = make_app(f"sqlite:///{tmp_path / 'a.db'}", tmp_path, records=[])
    b = make_app(f"sqlite:///{tmp_path / 'b.db'}", tmp_path, records=[])
    for app in (a, b):
        app.channels.follows.add(ChannelRef("console", "lab"), SubscriptionKind.TOPIC, "graphs")
    post(a)
    assert printed(a)
    assert not printed(b), "database B would skip a digest it never printed"
    again = make_app(f"sqlite:///{tmp_path / 'a.db'}", tmp_path, records=[])  # a restart
    assert printed(again), "the same database, reopened, must find what it printed"


def test_identity_is_kept_in_the_database_and_not_carried_by_an_export(tmp_path):
    url_a, url_b = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    a = Store.open(url_a)
    first = a.identity()
    assert Store.open(url_a).identity() == first
    b = Store.open(url_b)
    import_state(b, export_state(a))
    assert b.identity() != first


def test_a_copied_database_file_gets_its_own_transcript(tmp_path):
    """A copy of the SQLite file (cp bot.db copy.db) must not share the original's transcript.

    Repro: `cp a.db b.db`, both run: the copy carried `installation_id`, so both wrote and read
    one console-transcript file and a digest printed for one counted as posted for the other.
    Breaks that turn this red: Store.identity ignoring the file (the plain stored id again);
    comparing only the path (a moved file loses its transcript); comparing only the inode (a
    file restored over itself from a backup loses it); a random id for a copy (two processes
    opening the copy together disagree)."""
    import os
    import shutil

    a_db, b_db = tmp_path / "a.db", tmp_path / "b.db"
    a = make_app(f"sqlite:///{a_db}", tmp_path, records=[])
    a.channels.follows.add(ChannelRef("console", "lab"), SubscriptionKind.TOPIC, "graphs")
    post(a)
    first = a.store.identity()
    a.close()
    shutil.copy(a_db, b_db)
    b = make_app(f"sqlite:///{b_db}", tmp_path, records=[])
    assert not printed(b), "the copy would skip a digest it never printed"
    copy_id = b.store.identity()
    assert copy_id != first
    assert Store.open(f"sqlite:///{b_db}").identity() == copy_id  # the copy, reopened
    assert b.store.identity() == copy_id
    again = make_app(f"sqlite:///{a_db}", tmp_path, records=[])
    assert printed(again) and again.store.identity() == first, "the original, reopened"
    moved = tmp_path / "moved.db"
    os.rename(a_db, moved)
    assert Store.open(f"sqlite:///{moved}").identity() == first, "a moved file keeps its id"
    os.rename(moved, a_db)
    shutil.copy(a_db, tmp_path / "backup.db")
    os.replace(tmp_path / "backup.db", a_db)  # restored over itself: new inode, same path
    assert Store.open(f"sqlite:///{a_db}").identity() == first
    twin = tmp_path / "twin.db"
    shutil.copy(b_db, twin)
    one, two = Store.open(f"sqlite:///{twin}"), Store.open(f"sqlite:///{twin}")
    one.kv.set = lambda *_: None  # two processes racing: neither has stored its answer yet
    assert one.identity() == two.identity() != copy_id  # derived, so racing openers agree
