"""Leases in the database's clock (digest/store/leases.py), on SQLite and PostgreSQL: presence
counts the live replicas; shards are shared out by fair share, never held by two replicas,
taken over once their owner's lease lapses, given back on a clean stop, and follow a shard
count changed once in the database.

Breaks that turn this red (each tried): the take-over condition without ``until < now`` (a
lapsed shard is never taken: a shard without a lease stays dark); no give-back beyond the fair
share (a new replica gets nothing); presence counted without its lapse time (a dead replica
counts as live forever); ``leave`` not freeing shards.
"""

import time

from digest.store.leases import ShardHold

TTL = 1.0  # seconds; the database's clock moves on in real time


def _hold(store, worker: str, count: int = 4) -> ShardHold:
    return store.leases.shards("discord", worker, count, TTL)


def test_shards_are_shared_out_and_never_held_twice(store):
    assert _hold(store, "a").ids == {0, 1, 2, 3}  # alone: every shard
    assert _hold(store, "b").ids == set()  # a holds them all, none lapsed
    assert _hold(store, "a").ids == {0, 1}  # two live now: a gives the extra back
    b = _hold(store, "b")
    assert b.ids == {2, 3} and b.live == 2
    c = _hold(store, "c")  # a third: share 2 each (4 over 3, rounded up), nothing free yet
    assert c.ids == set() and c.live == 3
    owners = {h.shard: h.owner for h in store.leases.holders("discord")}
    assert owners == {0: "a", 1: "a", 2: "b", 3: "b"}


def test_a_lapsed_owners_shards_are_taken_over(store):
    assert _hold(store, "a").ids == {0, 1, 2, 3}
    assert _hold(store, "b").ids == set()
    time.sleep(TTL + 0.3)  # a stops renewing (dead); b renews
    b = _hold(store, "b")
    assert b.ids == {0, 1, 2, 3} and b.live == 1  # a no longer counts, its shards are b's
    assert store.leases.live() == 1
    assert all(h.owner == "b" and h.live for h in store.leases.holders("discord"))


def test_a_clean_stop_gives_shards_back_at_once(store):
    assert _hold(store, "a").ids == {0, 1, 2, 3}
    store.leases.leave("a")
    assert _hold(store, "b").ids == {0, 1, 2, 3}  # no wait for a lapse


def test_the_shard_count_is_the_databases_and_a_change_reaches_every_replica(store):
    assert store.leases.shard_count("discord", 2) == 2  # seeded once
    assert store.leases.shard_count("discord", 8) == 2  # another replica's setting: stored wins
    assert _hold(store, "a", 2).ids == {0, 1}
    store.leases.set_shard_count("discord", 3)  # `digestbot shards 3`, once
    count = store.leases.shard_count("discord", 2)
    assert count == 3 and _hold(store, "a", count).ids == {0, 1, 2}
    store.leases.set_shard_count("discord", 1)
    assert _hold(store, "a", 1).ids == {0}
    assert [h.shard for h in store.leases.holders("discord")] == [0]  # shards above it forgotten


def test_presence_counts_live_replicas_only(store):
    assert store.leases.beat("a", TTL) == 1
    assert store.leases.beat("b", TTL) == 2
    time.sleep(TTL + 0.3)
    assert store.leases.beat("b", TTL) == 1  # a lapsed
