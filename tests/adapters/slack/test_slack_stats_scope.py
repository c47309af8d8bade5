"""`/papers stats` where the app was installed without Slack's `files:write` scope: Slack refuses
the chart's upload (missing_scope, as the fake does), and the numbers still come as text with a
hint that names the missing scope; an export, whose file is the answer, says the same scope.

Breaks that turn this red (each tried): send_file() returning its error for a picture too (the
answer is only "Could not attach weekly-….png", no numbers); the hint not reading Slack's
``needed`` (no `files:write` in the answer, "Is the app in this channel?" instead); the fake
taking uploads without the scope (a file is shared and the answer says "Sent as").
"""

from __future__ import annotations

import json

import pytest

from digest.models import ChannelRef
from tests.adapters.slack.test_slack_http import Harness
from tests.fakes.slack import FakeSlack

C1 = ChannelRef("slack", "C1", "T1")


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")
        fake.scopes.discard("files:write")
        yield fake


@pytest.mark.asyncio
async def test_stats_without_files_write_still_gives_the_numbers(app, slack):
    async with Harness(app, slack) as h:
        await h.done("subscribe diffusion models")
        paper = app.papers.papers(1)[0].id
        app.channels.vote(C1, "U1", paper, 1)
        before = len(slack.responses())
        await h.done("stats")
        answer = (await h.responses(before + 1))[-1]
        await h.done("export bibtex liked")
        export = slack.responses()[-1]
    text = json.dumps(answer, ensure_ascii=False)
    assert "1 👍" in text and "Picture:" in text, text  # the numbers and the chart's alt text
    assert "`files:write`" in text and "Is the app in this channel" not in text, text
    assert answer["response_type"] == "ephemeral"
    said = json.dumps(export, ensure_ascii=False)
    assert "`files:write`" in said and "Could not attach digestbot-liked.bib:" in said, said
    assert slack.shared_files("C1") == [] and slack.shared_files("DU1") == []
    assert any(m == "files.getUploadURLExternal" for m, _ in slack.calls)  # it was tried
