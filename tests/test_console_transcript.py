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
from digest.portable import export_state, import_state
from digest.store import Store
from tests.conftest import make_app

KEY = "digest-1-2026-12-01#0"  # the key recovery asks about: channel id 1 exists in both databases


def printed(app, key: str = KEY) -> bool:
    console = app.adapters()["console"]
    ref = ChannelRef("console", "lab")
    return asyncio.run(console.find_part(ref, Reply(text=""), 0, key, None)) is not None


def post(app, key: str = KEY) -> None:
    console = app.adapters()["console"]
    ref = ChannelRef("console", "lab")
    asyncio.run(console.post_part(ref, Reply(text="digest"), 0, key, None))


def test_a_digest_printed_for_one_database_is_not_posted_for_another(tmp_path):
    a = make_app(f"sqlite:///{tmp_path / 'a.db'}", tmp_path, records=[])
    b = make_app(f"sqlite:///{tmp_path / 'b.db'}", tmp_path, records=[])
    for app in (a, b):
        app.channels.add(ChannelRef("console", "lab"), SubscriptionKind.TOPIC, "graphs")
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
