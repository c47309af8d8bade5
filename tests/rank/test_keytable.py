"""The vectorised key table answers as a dict would, through collisions, contention and growth.

Breaks that turn these red (each tried): probing that stops at the first slot instead of at an
empty one (``go = ~hit & False``); a claim where every contender takes the slot (the last
write wins, ``won = want``); growth that forgets the held keys (``_place`` skipped in
``_grow``); a load check that lets the table fill past half (``2 *`` dropped in ``put``).
"""

from __future__ import annotations

import numpy as np
import pytest

from digest.rank.keytable import MISSING, KeyTable


@pytest.mark.parametrize("seed", range(5))
def test_random_batches_answer_as_a_dict(seed: int) -> None:
    rng = np.random.default_rng(seed)
    table, truth = KeyTable(capacity=16), {}
    for _ in range(30):
        # Narrow key ranges make many keys share home slots; wide ones reach the phrase keys' range.
        span = int(rng.choice([50, 5_000, 1 << 40]))
        batch = rng.integers(0, span, size=int(rng.integers(1, 400)))
        got = table.get(batch)
        assert got.tolist() == [truth.get(k, MISSING) for k in batch.tolist()]
        new = np.array(sorted({k for k in batch.tolist() if k not in truth}), dtype=np.int64)
        vals = rng.integers(-1, 10**9, size=len(new))
        table.put(new, vals)
        truth.update(zip(new.tolist(), vals.tolist(), strict=True))
        assert len(table) == len(truth)
        assert 2 * len(table) <= len(table.keys)


def test_keys_sharing_one_home_slot_all_resolve() -> None:
    table = KeyTable(capacity=16)
    home = table._home(np.arange(10_000, dtype=np.int64))
    same = np.flatnonzero(home == home[0])[:6]  # six keys contending for one slot, in one call
    table.put(same, same * 10)
    assert table.get(same).tolist() == (same * 10).tolist()
    absent = np.setdiff1d(np.arange(10_000, dtype=np.int64), same)
    assert (table.get(absent) == MISSING).all()


def test_an_empty_lookup_and_an_empty_insert_do_nothing() -> None:
    table = KeyTable()
    table.put(np.array([], dtype=np.int64), np.array([], dtype=np.int64))
    assert table.get(np.array([], dtype=np.int64)).tolist() == []
    assert len(table) == 0
