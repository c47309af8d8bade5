"""The weekly picture: counts, drawing, the once-a-week claim, and the option (issue 25 item 3).

The platform upload flows are in tests/weekly/test_weekly_upload.py.
"""

from __future__ import annotations

import io
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise

import pytest
from PIL import Image
from sqlalchemy import update
from sqlalchemy.orm import Session

from digest.models import Channel, ChannelRef, SubscriptionKind
from digest.store.deliveries import ItemClaim
from digest.store.schema import FeedbackRow, WeeklyPictureRow
from digest.weekly.picture import OTHER, WeeklyPictures, aggregate, due_week

PNG = b"\x89PNG\r\n\x1a\n"
#: A Monday: the picture for this week is owed from 09:00 (the default digest time) on.
MONDAY = date(2026, 11, 30)
AFTER = datetime(2026, 11, 30, 9, 5, tzinfo=UTC)


def assert_png(data: bytes) -> None:
    """A real PNG: signature, decodes, a picture of some size with more than one colour."""
    assert data.startswith(PNG) and len(data) > 10_000
    img = Image.open(io.BytesIO(data))
    img.load()
    assert img.format == "PNG" and img.size[0] >= 600 and img.size[1] >= 400
    assert len(img.convert("RGB").getcolors(1 << 20) or []) > 10


def seed(store, ref: ChannelRef, topics=("diffusion models", "graph neural networks")) -> Channel:
    """A channel with ``topics``, three digests over the last weeks and some votes."""
    ch = store.channels.ensure(ref, name="lab")
    for t in topics:
        store.channels.add_subscription(ch.id, SubscriptionKind.TOPIC, t, "ann")
    papers = sorted(store.papers.recent_ids(50))[-9:]
    days = (MONDAY - timedelta(days=20), MONDAY - timedelta(days=13), MONDAY - timedelta(days=6))
    for n, day in enumerate(days):
        items = [
            ItemClaim(pid, r, 0.5, f"matches '{topics[r % len(topics)]}': word")
            for r, pid in enumerate(papers[3 * n : 3 * n + 3])
        ]
        store.deliveries.claim(ch.id, day, "seed", items)
    for user, pid, value in (("ann", papers[0], 1), ("bea", papers[1], 1), ("cy", papers[2], -1)):
        store.channels.put_feedback(ch.id, user, pid, value)
    with Session(store.engine) as s:  # cast last week (the store stamps votes with now)
        s.execute(update(FeedbackRow).values(created_at=AFTER - timedelta(days=4)))
        s.commit()
    return store.channels.get(ref)


def test_counts_per_interest_and_votes_per_local_week():
    """Papers go to their digest's week and the interest their why-line credits; votes to
    their local week (Sunday 23:30 UTC is Monday in Berlin); past six, interests fold into
    'other interests'. Breaks tried: bucketing votes by UTC date (the Berlin vote lands a week
    early: red); dropping the fold (eight lines: red)."""
    last = MONDAY
    delivered = [
        (last, "matches 'a': x"),
        (last - timedelta(days=1), "by Ada Lovelace, whom you follow"),
    ]
    delivered += [(last - timedelta(weeks=2), f"matches 't{i}': x") for i in range(7)]
    votes = [
        (datetime(2026, 11, 29, 23, 30, tzinfo=UTC), 1),
        (datetime(2026, 11, 24, tzinfo=UTC), -1),
    ]
    s = aggregate(delivered, votes, last, "Europe/Berlin")
    assert s.weeks[-1] == last and len(s.weeks) == 8 and s.weeks[0] == last - timedelta(weeks=7)
    assert s.per_interest["a"][-1] == 1 and s.per_interest["Ada Lovelace"][-2] == 1
    assert len(s.per_interest) == 7 and sum(s.per_interest[OTHER]) == 3
    assert s.up[-1] == 1 and s.down[-2] == 1 and sum(s.up + s.down) == 2
    alt = s.alt_text()
    assert "\n" not in alt and "9 in all" in alt and "1 👍, 1 👎 (50% 👍)" in alt


def test_the_picture_is_a_real_png(sqlite_store):
    """Breaks tried: returning the SVG or an empty figure (signature or colours: red)."""
    from digest.weekly.chart import draw

    s = aggregate([(MONDAY, "matches 'a': x")], [(AFTER, 1)], MONDAY, "UTC", partial=True)
    assert_png(draw(s, "Weekly picture for #lab"))


def test_interests_with_equal_counts_are_all_drawn_and_nothing_before_the_channel():
    """Eight interests (six drawn, two folded), several with identical weekly counts, in a
    channel set up three weeks ago: each interest is its own visible bar segment in every week
    it has papers (stacked, none hidden behind another), only the weeks since the channel's
    creation week are drawn, the vote share has its own panel, and the alt text counts the
    weeks drawn. Breaks tried: drawing lines again (no bar containers: red); bars without
    ``bottom`` (segments overlap: red, tried); ignoring ``since`` (eight weeks: red, tried)."""
    from digest.weekly.chart import draw, figure

    start = MONDAY - timedelta(weeks=2) + timedelta(days=2)  # a Wednesday three weeks back
    names = ["LLM alignment", "sparse autoencoders", "diffusion", "graphs", "robotics", "rl"]
    names += ["t7", "t8"]
    delivered = [
        (MONDAY - timedelta(weeks=w), f"matches '{n}': x")
        for w in range(3)
        for n in names
        for _ in range(2)
    ]
    s = aggregate(delivered, [(AFTER, 1), (AFTER, -1)], MONDAY, "UTC", since=start)
    assert s.weeks == tuple(MONDAY - timedelta(weeks=w) for w in (2, 1, 0))
    assert len(s.per_interest) == 7 and s.per_interest["LLM alignment"] == (2, 2, 2)
    assert "over the last 3 weeks" in s.alt_text() and "48 in all" in s.alt_text()
    fig = figure(s, "Weekly picture for #lab")
    top, votes, rate = fig.axes[:3]
    bars = top.containers
    assert len(bars) == len(s.per_interest) == 7
    assert [len(b.patches) for b in bars] == [3] * 7
    for week in range(3):
        spans = sorted((b.patches[week].get_y(), b.patches[week].get_height()) for b in bars)
        assert all(h > 0 for _, h in spans)
        assert all(y0 + h0 <= y1 + 1e-9 for (y0, h0), (y1, _) in pairwise(spans))
    assert [t.get_text() for t in top.get_legend().get_texts()].count("LLM alignment (6)") == 1
    assert len(rate.lines) == 1 and len(votes.containers) == 2
    assert len(rate.get_xticklabels()) == 3
    assert_png(draw(s, "Weekly picture for #lab"))


def test_weeks_with_data_before_the_recorded_creation_are_kept():
    """A channel whose created_at is later than its first digest (an old database) still shows
    the weeks that hold papers. Break tried: cutting at ``since`` alone (red)."""
    delivered = [(MONDAY - timedelta(weeks=5), "matches 'a': x"), (MONDAY, "matches 'a': x")]
    s = aggregate(delivered, [], MONDAY, "UTC", since=MONDAY)
    assert s.weeks[0] == MONDAY - timedelta(weeks=5) and s.per_interest["a"] == (1, 0, 0, 0, 0, 1)


def test_due_from_monday_at_the_digest_time_in_the_channel_zone():
    ch = Channel(1, ChannelRef("console", "lab"), timezone="America/New_York", digest_time="08:00")
    assert due_week(ch, datetime(2026, 11, 30, 12, 59, tzinfo=UTC)) is None  # 07:59 in New York
    assert due_week(ch, datetime(2026, 11, 30, 13, 0, tzinfo=UTC)) == MONDAY
    assert due_week(ch, datetime(2026, 12, 6, 23, 0, tzinfo=UTC)) == MONDAY  # Sunday: still owed
    # Sunday night there: that week's picture (from Monday 23 November) is the one owed
    assert due_week(ch, datetime(2026, 11, 30, 4, 0, tzinfo=UTC)) == MONDAY - timedelta(weeks=1)


def test_on_by_default_from_two_interests_and_the_option_decides(app):
    """Breaks tried: counting exclusions as interests (the one-topic channel is due: red);
    ignoring `option weekly off` (red)."""
    pics = WeeklyPictures(app.store, "w1")
    two, one = ChannelRef("console", "two"), ChannelRef("console", "one")
    app.channels.follows.add(two, SubscriptionKind.TOPIC, "diffusion models")
    app.channels.follows.add(two, SubscriptionKind.TOPIC, "graph neural networks")
    app.channels.follows.add(one, SubscriptionKind.TOPIC, "diffusion models")
    app.channels.follows.add(one, SubscriptionKind.EXCLUDE, "survey")

    def due() -> set[str]:
        return {c.ref.channel_id for c, _ in pics.due(AFTER, {"console"})}

    assert due() == {"two"}
    from bot.commands import Context

    said = app.commands.handle("option weekly off", Context(ref=two, user="ann"))
    assert said.text == "Option weekly is now off." and not said.error
    assert "weekly picture: off" in app.commands.handle("list", Context(ref=two, user="ann")).text
    app.channels.settings.set_option(one, "weekly", True)
    assert due() == {"one"}
    assert due() == {"one"} and pics.due(AFTER, {"slack"}) == []  # only platforms served here
    assert pics.due(AFTER - timedelta(minutes=10), {"console"}) == []  # 08:55: not yet


def test_each_week_is_claimed_once_across_processes(store, corpus_records):
    """Two processes sharing the database: one claim per channel and week; a lapsed claim
    (owner died before posting) is taken over by one worker, whose fence then rules; a claim
    that was being posted is never taken over (it may be on the platform).

    Breaks tried: dropping the unique constraint (two claims: red); take_over ignoring the
    lease (taken while held: red); take_over accepting `sending` (red); `posted` not fenced
    (the old owner records: red)."""
    store.papers.upsert(corpus_records[:20])
    ch = seed(store, ChannelRef("console", "lab"))
    a, b = WeeklyPictures(store, "a", lease=timedelta(seconds=30)), WeeklyPictures(store, "b")
    assert [c.id for c, _ in a.due(AFTER, {"console"})] == [ch.id]
    first = a.claim(ch, MONDAY)
    assert first is not None and b.claim(ch, MONDAY) is None
    assert a.due(AFTER, {"console"}) == [] and b.take_over({"console"}) == []  # still held
    with Session(store.engine) as s:  # the owner died: its lease runs out
        s.execute(update(WeeklyPictureRow).values(lease_until=AFTER - timedelta(days=1)))
        s.commit()
    (taken,) = b.take_over({"console"})
    assert taken.fence == 2 and a.take_over({"console"}) == []
    assert not store.weekly.sending(first) and store.weekly.sending(taken)
    with Session(store.engine) as s:
        s.execute(update(WeeklyPictureRow).values(lease_until=AFTER - timedelta(days=1)))
        s.commit()
    assert a.take_over({"console"}) == []  # being posted: never again
    assert not store.weekly.posted(first, "x") and store.weekly.posted(taken, "console:x")
    assert store.weekly.state(ch.id, MONDAY) == ("posted", None)


def test_eight_weeks_of_the_store_make_the_picture(store, corpus_records):
    """The claim's picture covers the eight weeks before its week, from stored digests and
    votes. Breaks tried: counting the claim's own week (the last bar is empty: red)."""
    store.papers.upsert(corpus_records[:20])
    ch = seed(store, ChannelRef("console", "lab"))
    pics = WeeklyPictures(store, "w")
    stats = pics.stats(ch, MONDAY - timedelta(weeks=1))
    # The channel row is stamped now, after the seeded digests: the weeks with data are drawn,
    # the empty weeks before them (the channel did not exist) are not.
    assert stats.weeks[0] == MONDAY - timedelta(weeks=3)
    assert stats.per_interest == {"diffusion models": (2, 2, 2), "graph neural networks": (1, 1, 1)}
    assert sum(stats.up) == 2 and stats.down[-1] == 1
    lease = pics.claim(ch, MONDAY)
    channel, pic = pics.for_week(lease)
    assert_png(pic.png)
    assert pic.alt == stats.alt_text() and "#lab" in pic.title and pic.filename.endswith(".png")


@pytest.mark.parametrize("platform", ["console"])
def test_stats_command_carries_the_picture(app, platform):
    """`/papers stats` answers with the picture and its alt text (the text alone when there is
    nothing to draw). Break tried: stats without `image` (red)."""
    from bot.commands import Context

    ref = ChannelRef(platform, "lab")
    ctx = Context(ref=ref, user="ann", now=AFTER)
    assert app.commands.handle("subscribe diffusion models", ctx).error is False
    empty = app.commands.handle("stats", ctx)
    assert empty.image is None and "0 papers" in empty.text
    seed(app.store, ref, ("diffusion models", "graph neural networks"))
    reply = app.commands.handle("stats", ctx)
    assert reply.image is not None and reply.image.alt in reply.text
    assert_png(reply.image.png)
    assert "(this week so far)" in reply.image.alt
