"""One vote per person under concurrent clicks: many people pressing poll buttons at the same
instant, each press on its own connection through the vote use case, on each backend
(PostgreSQL when DIGESTBOT_TEST_POSTGRES_URL is set: the case that matters, real concurrency).

Break tried: the vote written as read-then-insert-or-update instead of one upsert (on
PostgreSQL concurrent first presses by one person collide on the (poll, voter) unique key and
some answer "Something went wrong": red; SQLite's one writer serialises them, so it stays green
there).
"""

from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import time_machine

from bot.commands import Context
from digest.models import ChannelRef
from tests.conftest import make_app
from tests.reading.support import MEETING, OPEN

LAB = ChannelRef("slack", "C1", "T1")
PEOPLE = 8
PRESSES = 6


def test_concurrent_clicks_count_one_vote_per_person(db_url, tmp_path):
    app = make_app(db_url, tmp_path)
    try:
        ids = sorted(app.store.papers.recent_ids(20))[:3]
        ch = app.channels.channel(LAB)
        app.store.reading.set_group(ch.id, 3, "15:00", "Europe/Berlin", "U0")
        poll = app.store.reading.open_poll(
            ch.id, MEETING.date(), MEETING, MEETING - timedelta(days=1), ids
        )
        rng = random.Random(5)
        presses = [(f"U{p}", rng.choice(ids)) for p in range(PEOPLE) for _ in range(PRESSES)]
        rng.shuffle(presses)
        start = threading.Barrier(len(presses))

        def press(who_what: tuple[str, str]) -> str:
            who, paper = who_what
            ctx = Context(ref=LAB, user=who)
            start.wait()
            return app.commands.handle(f"reading-group vote {paper} {poll.id}", ctx).text

        with time_machine.travel(OPEN, tick=False), ThreadPoolExecutor(len(presses)) as pool:
            answers = list(pool.map(press, presses))
        assert all(a.startswith("Your vote") for a in answers), set(answers)
        votes = app.store.reading.votes(poll.id)
        voters = [v for v, _ in votes]
        assert sorted(voters) == sorted({f"U{p}" for p in range(PEOPLE)})  # one row each
        pressed = {}
        for who, paper in presses:
            pressed.setdefault(who, set()).add(paper)
        assert all(paper in pressed[who] for who, paper in votes)
    finally:
        app.close()
