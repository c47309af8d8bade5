"""👍/👎 say what they did and land where the card came from (issue 23), against the strict fake.

Breaks that turn this red: the vote listener answering nothing for an ephemeral card (the press
changes nothing visible; a second press withdraws silently); the Home preview posting its cards
untagged (voting_for removed: the 👍 lands on the person's own digest); the tagged value trusted
without the membership check (a non-member's 👍 counts in a channel they are not in).
"""

from __future__ import annotations

import asyncio
import json
from datetime import date

import pytest

from digest.models import ChannelRef, SubscriptionKind
from tests.adapters.slack.test_slack_behaviour import home_action
from tests.adapters.slack.test_slack_http import Harness, eventually
from tests.fakes.slack import FakeSlack

pytestmark = pytest.mark.asyncio
C1 = ChannelRef("slack", "C1", "T1")


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


def texts(slack: FakeSlack, start: int) -> list[str]:
    return [r.get("text", "") for r in slack.responses()[start:]]


async def test_votes_on_an_ephemeral_card_are_answered(app, slack):
    """`/papers paper` shows a card only the caller sees: each press says recorded / withdrawn."""
    app.channels.follows.add(C1, SubscriptionKind.TOPIC, "diffusion models")
    paper = app.digests.preview(C1, date(2026, 12, 1)).items[0].paper
    async with Harness(app, slack) as h:
        await h.done(f"paper {paper.id}")
        start = len(slack.responses())
        press = {"action_id": "vote_up", "value": paper.id, "type": "button"}
        await h.action(press)  # message=None: an ephemeral card, as Slack sends it
        await h.responses(start + 1)
        await h.action(press)
        await h.responses(start + 2)
    first, second = texts(slack, start)
    assert first.startswith("👍 recorded") and "withdrawn" in second
    assert app.channels.vote_counts(C1, paper.id) == (0, 0)
    assert slack.rejected == []


async def test_a_vote_on_a_home_preview_lands_on_the_previewed_channel(app, slack):
    """Preview from the App Home arrives in the person's DM; its 👍 counts for that channel."""
    app.channels.follows.add(C1, SubscriptionKind.TOPIC, "diffusion models")
    channel = app.store.channels.get(C1)
    slack.members.update({"C1": {"U1"}})
    async with Harness(app, slack) as h:
        await home_action(h, "home_preview", str(channel.id))
        await eventually(lambda: slack.ims.get("U1") and slack.arrived(slack.ims["U1"]))
        dm = slack.ims["U1"]
        message = slack.arrived(dm)[-1]
        vote = next(
            e
            for b in message["blocks"]
            if b["type"] == "actions"
            for e in b["elements"]
            if e["action_id"] == "vote_up"
        )
        paper = vote["value"].split()[0]
        start = len(slack.responses())
        await h.action(vote, message=message, channel=dm)
        await h.responses(start + 1)
        # someone not in C1 presses the same button (e.g. a forwarded value): refused
        await h.action({**vote, "action_ts": "99.1"}, message=message, channel=dm, user="U2")
        await h.responses(start + 2)
    assert app.channels.vote_counts(C1, paper) == (1, 0)
    mine = app.store.channels.get(ChannelRef("slack", "@U1", "T1"))
    assert mine is None or app.channels.vote_counts(mine.ref, paper) == (0, 0)
    said, refused = texts(slack, start)
    assert said.startswith("👍 recorded") and "<#C1>" in said
    assert "member" in refused
    updated = [a for m, a in slack.calls if m == "chat.update"]
    assert updated and "👍 1" in json.dumps(updated[-1]["blocks"], ensure_ascii=False)
    await asyncio.sleep(0)
