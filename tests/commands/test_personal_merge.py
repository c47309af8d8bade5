"""Merging older per-server personal digests into one (migration 0017, once): subscriptions, votes
and the papers already sent all carry over, so the kept digest learns from every vote and repeats
nothing.

Breaks that turn these red: the migration copying subscriptions only (no votes, no papers sent);
keeping the older of two votes on one paper (or adding a second row); moving the papers of a
digest still being sent, or copying instead of moving (a reaction on an old message then votes on
the paused digest)."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta

from bot.runtime.runner import DigestRunner
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from tests.fakes.recording import RecordingAdapter
from tests.support.migration_rows import merge_personal_digests

DAY = date(2026, 12, 1)
OLDER, NEWER = ChannelRef("console", "@7", "77"), ChannelRef("console", "@7", "88")


def test_merging_carries_votes_one_per_person_and_paper_the_newer_winning(app):
    app.channels.follows.add(OLDER, SubscriptionKind.TOPIC, "diffusion models")
    app.channels.follows.add(NEWER, SubscriptionKind.TOPIC, "graph neural networks")
    a, b, c = (p.id for p in app.papers.papers(3))
    app.channels.vote(OLDER, "7", a, 1)  # then 👎 in the newer one: the 👎 is newer, it wins
    app.channels.vote(NEWER, "7", a, -1)
    app.channels.vote(NEWER, "7", b, -1)  # then 👍 in the kept one: the 👍 stays
    app.channels.vote(OLDER, "7", b, 1)
    app.channels.vote(NEWER, "7", c, 1)  # only in the newer one: carried over
    merge_personal_digests(app.store.engine)
    assert app.channels.personal_ref("console", "7") == OLDER
    kept = app.store.channels.get(OLDER)
    votes = sorted((v.user, v.paper_id, v.value) for v in app.store.channels.feedback(kept.id))
    assert votes == sorted([("7", a, -1), ("7", b, 1), ("7", c, 1)])
    merge_personal_digests(app.store.engine)  # a second run changes nothing
    assert app.channels.personal_ref("console", "7") == OLDER
    assert len(app.store.channels.feedback(kept.id)) == 3


def test_merging_keeps_papers_sent_as_sent_so_nothing_is_repeated(app):
    for ref in (OLDER, NEWER):
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    newer = app.store.channels.get(NEWER)
    adapter = RecordingAdapter("console", per_message=1)
    runner = DigestRunner(Deliveries(app.papers, "w1"), {"console": adapter})
    assert "posted" in asyncio.run(runner.run_channel(newer.id, DAY))
    sent_before = set(adapter.papers("@7"))
    assert sent_before
    merge_personal_digests(app.store.engine)
    assert app.channels.personal_ref("console", "7") == OLDER
    kept = app.store.channels.get(OLDER)
    assert sent_before <= app.store.deliveries.delivered_paper_ids(kept.id)
    preview = app.digests.preview(OLDER, DAY + timedelta(days=1))
    assert not {i.paper.id for i in preview.items} & sent_before
    # a 👍 reaction on a message of the merged digest now votes on the kept one
    message = next(key for ref, key, ids in adapter.messages if len(ids) == 1)
    paper = next(ids[0] for ref, key, ids in adapter.messages if key == message)
    assert app.channels.react("console", "7", f"msg-{message}", 1) == paper
    assert [v.paper_id for v in app.store.channels.feedback(kept.id)] == [paper]
