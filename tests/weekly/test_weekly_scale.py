"""The weekly picture at scale: a sweep reads only what is owed, claims each picture just before
drawing it, and the running bot draws in a child process (issue 21's lesson: cost against the
size of the work, and the interactive path never waits on background work).
"""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime, timedelta

import pytest

from bot.commands.replies import Reply
from bot.runtime.background import ProcessDrawer
from digest.models import ChannelRef, DeliveryKind, DeliveryState, SubscriptionKind
from digest.weekly.draw import draw_here
from digest.weekly.picture import WeeklyPictures, WeeklyStats
from tests.weekly.test_weekly_picture import AFTER, MONDAY, assert_png, picture, seed, sender

STATS = WeeklyStats((MONDAY,), {"diffusion models": (3,)}, (1,), (0,))


def _two_topics(store, name: str, **options) -> int:
    ch = store.channels.ensure(ChannelRef("console", name), name=name)
    for t in ("diffusion models", "graph neural networks"):
        store.channels.add_subscription(ch.id, SubscriptionKind.TOPIC, t, "ann")
    if options:
        store.channels.update(ch.id, **options)
    return ch.id


def test_a_sweep_after_the_pictures_went_out_reads_no_channel(store):
    """Once this week's pictures are claimed, a sweep finds nothing owed without loading any
    channel: only running channels with the picture on (or two interests) and no claim for
    the latest week any zone is in are read.

    Breaks tried: `due` walking `channels.all()` again (40 channels read: red); dropping the
    "no claim" condition (red); dropping the two-interest rule (the one-topic channel is read:
    red); not skipping paused channels (red)."""
    ids = [_two_topics(store, f"c{i}") for i in range(40)]
    one = store.channels.ensure(ChannelRef("console", "one"), name="one")
    store.channels.add_subscription(one.id, SubscriptionKind.TOPIC, "diffusion models", "ann")
    _two_topics(store, "paused", paused=True)
    pics = WeeklyPictures(store)
    assert {c.id for c, _ in pics.due(AFTER, {"console"})} == set(ids)
    for cid in ids:
        assert store.deliveries.claim(cid, MONDAY, "w", [], kind=DeliveryKind.WEEKLY) is not None
    loaded = []
    original = store.channels.all
    store.channels.all = lambda: loaded.append(1) or original()  # type: ignore[method-assign]
    assert store.weekly.owing({"console"}, unclaimed_from=MONDAY) == []
    assert (
        pics.due(AFTER, {"console"}) == []
        and pics.due(AFTER + timedelta(days=3), {"console"}) == []
    )
    assert loaded == []


def test_the_zone_furthest_ahead_owes_next_weeks_picture_on_sunday(store):
    """On Sunday 11:00 UTC it is already Monday 01:00 in Kiritimati (UTC+14): a channel there
    with its digest at 00:30 owes next week's picture, though this week's is claimed.

    Breaks tried: taking the latest week from the UTC date (the channel is filtered out: red)."""
    cid = _two_topics(store, "kiritimati", timezone="Pacific/Kiritimati", digest_time="00:30")
    assert store.deliveries.claim(cid, MONDAY, "w", [], kind=DeliveryKind.WEEKLY) is not None
    sunday = datetime(2026, 12, 6, 11, 0, tzinfo=UTC)
    owed = WeeklyPictures(store).due(sunday, {"console"})
    assert [(c.id, w) for c, w in owed] == [(cid, MONDAY + timedelta(weeks=1))]


class _Recorder:
    """A platform that records, in order, what arrived (the log also gets the claims)."""

    platform = "console"

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def plan(self, reply: Reply) -> list[tuple[str, ...]]:
        return [()]

    async def post_part(self, ref, reply, position, key, parent, degrade=False):  # noqa: ARG002
        self.log.append(f"posted {ref.channel_id}")
        return f"console:{ref.channel_id}"

    async def find_part(self, ref, reply, position, key, parent, since=None):  # noqa: ARG002
        return None


def test_each_picture_is_claimed_just_before_it_is_drawn(app, corpus_records):
    """A sweep claims one picture, sends it, then claims the next: claiming every owed picture
    first would let the later leases (5 minutes) run out while earlier ones are drawn, and
    other processes take them over.

    Breaks tried: claiming all owed pictures before sending any (claim, claim, posted,
    posted: red)."""
    app.store.papers.upsert(corpus_records[:30])
    seed(app.store, ChannelRef("console", "a"))
    seed(app.store, ChannelRef("console", "b"))
    log: list[str] = []
    weekly = sender(app, {"console": _Recorder(log)}, draw=lambda stats, title: b"\x89PNG fake")
    claim = weekly.runner.deliveries.claim_picture

    def logged_claim(channel, week):
        log.append(f"claim {channel.ref.channel_id}")
        return claim(channel, week)

    weekly.runner.deliveries.claim_picture = logged_claim  # type: ignore[method-assign]
    done = asyncio.run(weekly.sweep())
    assert sorted(done.values()) == ["posted the weekly picture"] * 2
    assert log == ["claim a", "posted a", "claim b", "posted b"]


def _pid_png(stats: WeeklyStats, title: str) -> bytes:  # noqa: ARG001 - the worker's identity
    return f"{os.getpid()}".encode()


def test_the_running_bot_draws_in_a_child_process_and_replaces_a_dead_one():
    """The picture is drawn by a worker process (its pid is not ours), a real PNG comes back,
    and a worker killed mid-life is replaced on the next picture.

    Breaks tried: drawing in this process (same pid: red); no replacement after
    BrokenProcessPool (the second call raises: red)."""
    drawer = ProcessDrawer(_pid_png)
    try:
        first = int(drawer(STATS, "t"))
        assert first != os.getpid()
        os.kill(first, 9)
        second = int(drawer(STATS, "t"))
        assert second not in (first, os.getpid())
    finally:
        drawer.close()
    real = ProcessDrawer()
    try:
        assert_png(real(STATS, "Weekly picture for #lab"))
    finally:
        real.close()


@pytest.mark.parametrize("console", [None, True])
def test_only_the_running_bot_gets_a_drawing_process(tmp_path, console):
    """`digestbot run` (console None) draws in a child; one-shot commands draw here."""
    from bot.app import App
    from bot.config import Settings

    app = App(Settings(), f"sqlite:///{tmp_path / 'x.db'}", console=console)
    assert isinstance(app.drawer, ProcessDrawer) == (console is None)
    assert app.digests.draw is app.drawer
    app.close()


def test_a_picture_that_cannot_be_drawn_fails_alone(app, corpus_records):
    """One channel's picture raising while drawn (any fault, not a platform refusal) is given up
    for that week; the other channels still get theirs, and the next sweep does not try it again.

    Break tried: no catch-all in the runner's send (the sweep stopped at the first channel and
    "b" never got a picture, sweep after sweep: red)."""
    app.store.papers.upsert(corpus_records[:30])
    bad = seed(app.store, ChannelRef("console", "a"))
    seed(app.store, ChannelRef("console", "b"))
    log: list[str] = []

    def draw(stats, title):
        if "#lab" in title and not log:  # the first picture drawn (channel a) fails
            log.append("boom")
            raise ValueError("Unknown symbol: \\nocmd")
        return b"\x89PNG fake"

    weekly = sender(app, {"console": _Recorder(log)}, draw=draw)
    done = asyncio.run(weekly.sweep())
    assert "internal error (ValueError" in done[str(bad.id)]
    assert log == ["boom", "posted b"]
    assert picture(app.store, bad.id).status == DeliveryState.FAILED
    assert asyncio.run(weekly.sweep()) == {}


def test_labels_people_typed_are_drawn_as_typed():
    """An interest or channel name with dollar signs is text, not a formula: "$\\nocmd$" made
    matplotlib raise. Break tried: math parsing left on (ParseFatalException: red)."""
    stats = WeeklyStats((MONDAY,), {"$\\nocmd$ sparse autoencoders": (3,)}, (1,), (0,))
    assert_png(draw_here(stats, "Weekly picture for #m$\\nocmd$x"))


def test_a_picture_owed_before_the_channel_was_paused_is_not_sent(app, corpus_records):
    """A claim retried (or taken over) after its channel was paused sends nothing: "A paused
    channel gets none"; switched off, nothing either. Breaks tried: the runner not checking
    paused for a stored claim and for_week not checking it (posted: red); for_week ignoring
    `weekly off` (posted: red)."""
    app.store.papers.upsert(corpus_records[:30])
    ch = seed(app.store, ChannelRef("console", "a"))
    log: list[str] = []
    weekly = sender(app, {"console": _Recorder(log)}, draw=lambda stats, title: b"\x89PNG fake")
    claim = weekly.runner.deliveries.claim_picture(ch, MONDAY)
    app.store.channels.update(ch.id, paused=True)
    outcome = asyncio.run(weekly.runner.send(claim, _Recorder(log)))
    assert "paused" in outcome and log == []
    assert picture(app.store, ch.id).status == DeliveryState.FAILED
    other = seed(app.store, ChannelRef("console", "b"))
    claim = weekly.runner.deliveries.claim_picture(other, MONDAY)
    app.store.channels.update(other.id, weekly=False)
    assert asyncio.run(weekly.runner.send(claim, _Recorder(log))) == "nothing to draw"
    assert log == [] and picture(app.store, other.id).status == DeliveryState.EMPTY
