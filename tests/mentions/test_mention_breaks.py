"""What a user, a curious colleague and a hostile platform tried against colleague mentions
(docs/mentions.md), kept as tests where it broke something.

Breaks tried (each turned a test here red before its fix):
- ``best_fits`` scoring a member's own 👎 like any other paper -> the member is pinged on a pick
  they voted down in their personal digest
  (test_a_paper_you_voted_down_in_your_own_digest_never_mentions_you);
- `--public` (or Discord's public option) on `me mention …` sharing the answer in the channel,
  which tells everyone who opted in or out (test_mention_answers_stay_private_even_with_public,
  and over Slack's signed HTTP: test_slack_mention_on_with_public_is_answered_ephemerally);
- the private `why` gluing its reason to the next sentence (no full stop)
  -> test_the_private_why_line_ends_its_reason_before_only_you_see.
"""

from __future__ import annotations

import json

import pytest

from digest.models import ChannelRef
from tests.adapters.slack.test_slack_http import Harness
from tests.commands import test_busy_channel as busy
from tests.mentions.test_mentions import DAY, LAB, LIBRARY, _console_digest, say

slack = busy.slack  # the strict Slack fake, as a fixture
SLACK_C1 = ChannelRef("slack", "C1", "T1")


@pytest.fixture
def team(app):
    """The channel follows GNNs; bob's own digest follows GNNs too, with a low threshold, so
    every pick fits him."""
    app.store.papers.upsert([LIBRARY])
    assert not say(app, LAB, "ann", "/papers subscribe graph neural networks").error
    assert not say(app, LAB, "bob", "/papers me subscribe graph neural networks").error
    assert not say(app, LAB, "bob", "/papers me threshold 0.01").error
    return app


def test_a_paper_you_voted_down_in_your_own_digest_never_mentions_you(team):
    """bob 👎'd every pick of today's channel digest in his personal digest (it never sends a
    paper voted on): he must not be pinged on one of them as "the pick that fits your digest".
    Before the fix he was mentioned on #2, a paper he had just voted down."""
    app = team
    picks = [c.paper_id for c in say(app, LAB, "ann", "/papers digest preview").cards]
    assert len(picks) == 5
    assert not say(app, LAB, "bob", "/papers me down " + " ".join(picks)).error
    assert not say(app, LAB, "bob", "/papers me mention on").error
    shown = _console_digest(app, DAY)
    assert "5 new" in shown and "@bob" not in shown
    ch = app.store.channels.get(LAB)
    assert not any(i.mentions for i in app.store.deliveries.for_day(ch.id, DAY).items)


def test_a_paper_you_voted_down_is_skipped_for_your_next_best_fit(team):
    """Voting down one pick moves bob's mention to another pick that fits, not off the digest."""
    app = team
    picks = [c.paper_id for c in say(app, LAB, "ann", "/papers digest preview").cards]
    assert not say(app, LAB, "bob", "/papers me down " + picks[0]).error
    assert not say(app, LAB, "bob", "/papers me mention on").error
    _console_digest(app, DAY)
    ch = app.store.channels.get(LAB)
    items = app.store.deliveries.for_day(ch.id, DAY).items
    (mentioned,) = [i.paper_id for i in items if i.mentions == ("bob",)]
    assert mentioned != picks[0]


@pytest.mark.parametrize(
    ("text", "kw"),
    [
        ("/papers me mention on --public", {}),
        ("/papers mention on —public", {}),
        ("/papers me mention --public", {}),
        ("/papers me mention off --public", {}),
        ("/papers me mention on", {"shared": True}),  # Discord's public:True
        ("/papers mention", {"shared": True}),
    ],
)
def test_mention_answers_stay_private_even_with_public(team, text, kw):
    """docs/mentions.md: "Every answer is private." A shared answer would tell the channel that
    bob opted in (or out); before the fix `--public` posted it in the channel."""
    reply = say(team, LAB, "bob", text, **kw)
    assert not reply.error and "mentioned" in reply.text
    assert reply.ephemeral and not reply.public


@pytest.mark.asyncio
async def test_slack_mention_on_with_public_is_answered_ephemerally(app, slack):
    """Over signed HTTP against the Slack fake: `/papers me mention on --public` is answered
    to its asker only (response_type ephemeral), never in_channel."""
    assert not say(app, SLACK_C1, "U1", "/papers subscribe graph neural networks").error
    async with Harness(app, slack) as h:
        await h.done("me subscribe graph neural networks", user="U2")
        for text in ("me mention on --public", "mention --public", "me mention off —public"):
            await h.done(text, user="U2")
            answer = slack.responses()[-1]
            assert answer["response_type"] == "ephemeral", answer
            assert "mentioned" in json.dumps(answer)


def test_the_private_why_line_ends_its_reason_before_only_you_see(team):
    """bob's private `why` read "Your digest's reason: like *…* Only you see this line.": the
    reason ran into the next sentence. Each sentence now ends with its full stop."""
    app = team
    assert not say(app, LAB, "bob", "/papers me mention on").error
    _console_digest(app, DAY)
    ch = app.store.channels.get(LAB)
    pick = next(i.paper_id for i in app.store.deliveries.for_day(ch.id, DAY).items if i.mentions)
    mine = say(app, LAB, "bob", f"/papers why {pick}").text
    assert "Your digest's reason: " in mine
    assert mine.endswith(". Only you see this line.") and ".. " not in mine


def test_a_crowd_is_cut_to_the_best_fitting_when_the_digest_is_composed():
    """90 members fit: the 80 whose fit scores highest are stored as mentioned, so every stored
    mention is one the platforms ping (Discord pings at most 80 a message here) and `why` tells
    the truth. Break that turns this red: no cap at composition (90 stored, 80 pinged)."""
    from digest.mentions.service import MAX_PER_DIGEST, Member, best_fits
    from digest.rank.profile import Profile
    from digest.rank.results import Hit, Picks

    class ByName:
        def rank(self, p, candidate_ids, size=5, threshold=0.3, diversity=0.3):
            score = int(p.topics[0]) / 100  # member n fits at n / 100
            return Picks(hits=tuple(Hit(pid, score, "") for pid in candidate_ids))

    members = [Member(f"U{n:03d}", Profile(topics=(str(n),)), 0.0) for n in range(90)]
    fits = best_fits(ByName(), members, ["p1", "p2"])
    assert len(fits) == MAX_PER_DIGEST == 80
    assert set(fits) == {f"U{n:03d}" for n in range(10, 90)}
