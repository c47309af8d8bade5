"""Presses of 👍/👎 at the same moment (a double-click, two processes): each gets a clear answer,
and a double click never takes the vote back: pressing 👍 means "I like this", idempotently.

Breaks that turn this red: set_feedback reading the vote, then inserting (the second press of a
double-click fails on the unique key: "Something went wrong… nothing was changed" although the
vote was recorded); an update without the `value != new` condition (two presses both answer
"recorded"); a withdraw that deletes whatever vote is there (a 👎 racing a 👍 answers "withdrawn"
while a vote stays stored); the withdraw without its `pressed_at` window (double clicks end with
no vote, and an answer says "withdrawn"); no final look-up of the same vote (the racing press
loops five times and fails: "vote kept changing under us"); the window measured on the worker's
clock rather than the database's (a press a second later, by the database's clock, but with the
worker's clock stopped, still counts as the same click: nothing withdrawn).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from digest.models import ChannelRef
from digest.store import Store
from digest.store.feedback import DOUBLE_CLICK_S
from tests.support.corpus import synthetic_records

ROUNDS = 20


def _press_together(store: Store, channel_id: int, paper: str, values: list[int]) -> list[int]:
    """Every value pressed by one person at the same instant, each on its own connection."""
    start = threading.Barrier(len(values))

    def press(value: int) -> int:
        start.wait()
        return store.channels.set_feedback(channel_id, "U1", paper, value)

    with ThreadPoolExecutor(len(values)) as pool:
        return list(pool.map(press, values))


def _stored(store: Store, channel_id: int, paper: str) -> int:
    votes = [v.value for v in store.channels.feedback(channel_id) if v.paper_id == paper]
    assert len(votes) <= 1, votes  # one person, one vote on a paper
    return votes[0] if votes else 0


def test_double_clicks_keep_the_vote(store: Store) -> None:
    """Four presses of 👍 at once (a double click, a retrying client): every answer says the vote
    is recorded and it is stored once; a press after the window, by the database's clock,
    withdraws it, even with the worker's clock stopped."""
    papers = synthetic_records()[:ROUNDS]
    store.papers.upsert(papers)
    channel = store.channels.ensure(ChannelRef("slack", "C1", "T1"))
    for record in papers:
        answers = _press_together(store, channel.id, record.id, [1, 1, 1, 1])
        assert answers == [1, 1, 1, 1], answers  # nobody is told "withdrawn"
        assert _stored(store, channel.id, record.id) == 1
    frozen = datetime(2026, 12, 1, 9, tzinfo=UTC)
    store.channels.clock = lambda: frozen  # the worker's clock stands still; the database's runs
    first = papers[-1].id  # pressed a moment ago
    assert store.channels.set_feedback(channel.id, "U1", first, 1) == 1  # still the same click
    time.sleep(DOUBLE_CLICK_S + 0.2)
    assert store.channels.set_feedback(channel.id, "U1", first, 1) == 0  # a deliberate press
    assert _stored(store, channel.id, first) == 0


def test_opposite_votes_at_once_leave_one_vote_that_an_answer_named(store: Store) -> None:
    """👍 and 👎 at once: the vote left stored is the one whose answer came last in the order."""
    papers = synthetic_records()[:ROUNDS]
    store.papers.upsert(papers)
    channel = store.channels.ensure(ChannelRef("slack", "C1", "T1"))
    for record in papers:
        answers = _press_together(store, channel.id, record.id, [1, -1])
        assert 0 not in answers, answers  # neither press found its own vote to withdraw
        assert _stored(store, channel.id, record.id) in answers
