"""A double click on 👍 in Slack leaves the vote, and nobody is told "withdrawn": two presses
(two distinct interactions, as Slack sends a double click) within a second are one "I like this".

Breaks that turn this red (each tried): set_feedback() withdrawing whatever same vote is stored
(the second press answers "withdrawn" and the vote is gone); the press window measured on a
clock that the second press does not see (the same).
"""

from __future__ import annotations

from datetime import date

import pytest

from digest.models import ChannelRef, SubscriptionKind
from tests.adapters.slack.test_slack_http import Harness
from tests.fakes.slack import FakeSlack

C1 = ChannelRef("slack", "C1", "T1")


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")
        yield fake


@pytest.mark.asyncio
async def test_a_double_click_keeps_the_vote(app, slack):
    app.channels.follows.add(C1, SubscriptionKind.TOPIC, "diffusion models")
    paper = app.digests.preview(C1, date(2026, 12, 1)).items[0].paper
    async with Harness(app, slack) as h:
        await h.done(f"paper {paper.id}")
        start = len(slack.responses())
        press = {"action_id": "vote_up", "value": paper.id, "type": "button"}
        await h.action({**press, "action_ts": "100.1"}, trigger="click-1")
        await h.action({**press, "action_ts": "100.3"}, trigger="click-2")
        said = [r.get("text", "") for r in await h.responses(start + 2)][start:]
    assert len(said) == 2 and all(t.startswith("👍 recorded") for t in said), said
    assert app.channels.vote_counts(C1, paper.id) == (1, 0)
    assert slack.rejected == []
