"""Zotero on Slack, through signed requests to the Bolt app and the strict fake Slack API:
the connect modal, its submission, and the Save button on a card."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from tests.adapters.slack.test_slack_http import Harness, eventually
from tests.fakes.slack import FakeSlack
from tests.support.corpus import synthetic_records
from tests.zotero.conftest import KEY, USER_LIB

pytestmark = pytest.mark.asyncio


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")
        fake.add_user("U1", "ann")
        yield fake


async def submit(h: Harness, modal: dict, library: str, key: str, user: str = "U1"):
    payload = {
        "type": "view_submission",
        "team": {"id": "T1"},
        "user": {"id": user},
        "api_app_id": "A1",
        "view": {
            **modal,
            "id": "V1",
            "state": {
                "values": {
                    "library": {"value": {"type": "plain_text_input", "value": library}},
                    "key": {"value": {"type": "plain_text_input", "value": key}},
                }
            },
        },
    }
    body = urlencode({"payload": json.dumps(payload)})
    return await h.post(body, "application/x-www-form-urlencoded")


def dms(slack: FakeSlack) -> list[str]:
    return [a.get("text") or "" for m, a in slack.calls if m == "chat.postMessage"]


async def test_connect_opens_a_modal_and_its_submission_connects_and_syncs(
    zapp, slack, zotero_fake
):
    """Breaks that turn this red: the form sent as a message (no views.open, or without the
    trigger_id: the fake refuses it); the submission not handled (no view listener); the key
    echoed into any message or response."""
    p = synthetic_records()[0]
    zotero_fake.add_item(USER_LIB, itemType="journalArticle", title=p.title, creators=[])
    async with Harness(zapp, slack) as h:
        assert (await h.command("me zotero connect")).status_code == 200
        await eventually(lambda: slack.__dict__.get("modals"))
        [modal] = slack.modals
        assert modal["callback_id"] == "zotero_connect"
        assert (await submit(h, modal, "475425", KEY)).status_code == 200
        await eventually(lambda: any("Connected" in t for t in dms(slack)))
    assert slack.rejected == []
    assert KEY not in json.dumps(slack.calls) and KEY not in json.dumps(slack.responses())
    assert zapp.store.zotero.get("slack", "T1", "U1") is not None
    assert any("1 `like:` interest added" in t for t in dms(slack))


async def test_the_save_button_on_a_card_saves_to_zotero(zapp, slack, zotero_fake):
    """Breaks that turn this red: the card without the Save button, or the button with no
    listener (Bolt answers nothing); the save made twice on a second press."""
    p = synthetic_records()[0]
    async with Harness(zapp, slack) as h:
        await h.command("me zotero connect")
        await eventually(lambda: slack.__dict__.get("modals"))
        await submit(h, slack.modals[0], "475425", KEY)
        await eventually(lambda: any("Connected" in t for t in dms(slack)))
        await h.done(f"paper {p.id}")
        blocks = slack.responses()[-1]["blocks"]
        button = next(
            e
            for b in blocks
            if b["type"] == "actions"
            for e in b["elements"]
            if e.get("action_id") == "save"
        )
        assert button["text"]["text"] == "📚 Save to Zotero" and button["value"] == p.id
        for _ in range(2):
            before = len(slack.responses())
            await h.action(button)
            await h.responses(before + 1)
        texts = [r.get("text", "") for r in slack.responses()[-2:]]
        assert "Saved" in texts[0] and "already" in texts[1], texts
    items = zotero_fake.library(USER_LIB).items.values()
    assert [i["title"] for i in items] == [p.title]
    assert slack.rejected == []
