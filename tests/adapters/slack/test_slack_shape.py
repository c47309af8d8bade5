"""Signed Slack requests without the fields Slack always sends get 400 and change nothing.

Breaks that turn this red: inbound.problem() not calling action_problem (empty ``actions``: 500
from Bolt's middleware, IndexError); command_problem dropped (a command with only ``command`` and
``text`` is 200 and logs "Slack listener papers failed: KeyError"; ``channel_id=""`` creates the
channel ``slack:T1/``); event_problem dropped (a reaction without ``user`` is 200 + KeyError).
"""

import asyncio
import json
import logging
import time
from urllib.parse import urlencode

import pytest

from tests.adapters.slack.test_slack_behaviour import signed_raw
from tests.adapters.slack.test_slack_http import Harness
from tests.fakes.slack import FakeSlack

pytestmark = pytest.mark.asyncio
FORM = "application/x-www-form-urlencoded"


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")
        yield fake


def command(**fields) -> str:
    base = {
        "command": "/papers",
        "text": "subscribe graphs",
        "team_id": "T1",
        "channel_id": "C1",
        "user_id": "U1",
        "response_url": "http://127.0.0.1:9/resp",
        "trigger_id": "t1",
    }
    return urlencode({k: v for k, v in {**base, **fields}.items() if v is not None})


def action(**fields) -> str:
    base = {
        "type": "block_actions",
        "team": {"id": "T1"},
        "user": {"id": "U1"},
        "channel": {"id": "C1"},
        "trigger_id": "t2",
        "api_app_id": "A1",
        "actions": [{"action_id": "vote_up", "value": "p1", "action_ts": "1.5"}],
    }
    return urlencode(
        {"payload": json.dumps({k: v for k, v in {**base, **fields}.items() if v is not None})}
    )


def event(inner: dict, **fields) -> str:
    return json.dumps(
        {"type": "event_callback", "team_id": "T1", "event_id": "Ev1", "event": inner, **fields}
    )


CASES = [
    (action(actions=[]), FORM),
    (action(actions=[{"value": "p1"}]), FORM),
    (action(user=None), FORM),
    (action(team=None), FORM),
    (action(channel={}), FORM),
    (urlencode({"command": "/papers", "text": "subscribe graphs"}), FORM),
    (command(channel_id=""), FORM),
    (command(channel_id="C1/../x"), FORM),
    (command(team_id=""), FORM),
    (command(user_id=None), FORM),
    (command(text=None), FORM),
    (command(response_url=None), FORM),
    (
        event(
            {"type": "reaction_added", "reaction": "+1", "item": {"type": "message"}, "user": "U1"}
        ),
        "application/json",
    ),
    (
        event(
            {
                "type": "reaction_added",
                "reaction": "+1",
                "item": {"type": "message", "channel": "C1", "ts": "1.2"},
            }
        ),
        "application/json",
    ),
    (event({"type": "app_home_opened"}), "application/json"),
    (event({"type": "message", "channel_type": "im", "text": "help"}), "application/json"),
    (event({"user": "U1"}), "application/json"),
    (event({"type": "app_home_opened", "user": "U1"}, team_id=""), "application/json"),
]


async def test_requests_missing_what_slack_always_sends_get_400_and_change_nothing(
    app, slack, caplog
):
    caplog.set_level(logging.INFO)
    async with Harness(app, slack) as h:
        for body, ctype in CASES:
            r = await signed_raw(h, body, ctype, str(int(time.time())))
            assert r.status_code == 400, (body[:80], r.status_code)
        await asyncio.sleep(0.3)
        assert app.store.channels.all() == [] and [c[0] for c in slack.calls] == []
        await h.done("help")  # a complete one still works
    assert "failed" not in caplog.text and "Error" not in caplog.text


async def test_real_shapes_still_pass(app, slack):
    """A reaction on a file (no channel), a bot's message and a Home press without a channel
    are what Slack really sends: answered 200, not refused (Slack would retry a 400 event)."""
    ok = [
        (
            event(
                {
                    "type": "reaction_added",
                    "user": "U1",
                    "reaction": "+1",
                    "item": {"type": "file", "file": "F1"},
                }
            ),
            "application/json",
        ),
        (
            event(
                {"type": "message", "subtype": "bot_message", "bot_id": "B1", "channel": "D1"},
                event_id="Ev9",
            ),
            "application/json",
        ),
        (action(channel=None, trigger_id="t9"), FORM),
    ]
    async with Harness(app, slack) as h:
        for body, ctype in ok:
            r = await signed_raw(h, body, ctype, str(int(time.time())))
            assert r.status_code == 200, (body[:80], r.status_code)


async def test_a_request_without_signature_headers_is_401_not_500(app, slack, caplog):
    """Break that turns this red: the `ts is None` check dropped from inbound.problem (the
    verifier's int('') raises: 500 and a traceback in the log)."""
    async with Harness(app, slack) as h:
        for headers in ({}, {"X-Slack-Signature": "v0=abc"}):
            r = await h.http.post("/slack/events", content="x=1", headers=headers)
            assert r.status_code == 401, (headers, r.status_code)
    assert "Traceback" not in caplog.text and app.store.channels.all() == []
