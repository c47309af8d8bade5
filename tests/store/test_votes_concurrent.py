"""Presses of 👍/👎 at the same moment (a double-click, two processes): each gets a clear answer.

Breaks that turn this red: set_feedback reading the vote, then inserting (the second press of a
double-click fails on the unique key: "Something went wrong… nothing was changed" although the
vote was recorded); an update without the `value != new` condition (two presses both answer
"recorded"); a withdraw that deletes whatever vote is there (a 👎 racing a 👍 answers "withdrawn"
while a vote stays stored).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from digest.models import ChannelRef
from digest.store import Store
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


def test_double_clicks_toggle_in_some_order_and_never_fail(store: Store) -> None:
    """A double-click is two presses applied one after the other: one answer records the vote,
    the other withdraws it, and what is stored is what the last answer said (nothing)."""
    papers = synthetic_records()[:ROUNDS]
    store.papers.upsert(papers)
    channel = store.channels.ensure(ChannelRef("slack", "C1", "T1"))
    for record in papers:
        answers = _press_together(store, channel.id, record.id, [1, 1, 1, 1])
        assert sorted(answers) == [0, 0, 1, 1], answers  # record, withdraw, record, withdraw
        assert _stored(store, channel.id, record.id) == 0


def test_opposite_votes_at_once_leave_one_vote_that_an_answer_named(store: Store) -> None:
    """👍 and 👎 at once: the vote left stored is the one whose answer came last in the order."""
    papers = synthetic_records()[:ROUNDS]
    store.papers.upsert(papers)
    channel = store.channels.ensure(ChannelRef("slack", "C1", "T1"))
    for record in papers:
        answers = _press_together(store, channel.id, record.id, [1, -1])
        assert 0 not in answers, answers  # neither press found its own vote to withdraw
        assert _stored(store, channel.id, record.id) in answers
