"""Slack as Slack really behaves (issue 11): every check goes through signed HTTP requests to the
Bolt app, against the fake Web API that rejects what Slack rejects (tests/fakes/slack.py, which
uses the same validator as the renderer: bot/adapters/slack/limits.py).

Each test's docstring lists the deliberate breaks tried and seen red.
"""

import asyncio
import json
import re
import time
from datetime import date
from urllib.parse import urlencode

import pytest

from digest.models import ChannelRef, Links, PaperRecord, SubscriptionKind
from tests.adapters.slack.test_slack_http import Harness, eventually
from tests.fakes.slack import FakeSlack

pytestmark = pytest.mark.asyncio


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


def button(response: dict, label: str) -> dict:
    """The page button with ``label`` in a response's blocks."""
    return next(
        e
        for b in response["blocks"]
        if b.get("block_id") == "pages"
        for e in b["elements"]
        if label in e["text"]["text"]
    )


async def test_search_pages_forward_and_back_beyond_page_two(app, slack):
    """Item 1. Break tried: every page button with action_id "page" -> page 2 (Prev + Next in
    one block) is refused by the fake as invalid_blocks and page 3 never comes (red)."""
    async with Harness(app, slack) as h:
        await h.done("search learning")
        first = slack.responses()[-1]
        pages = int(re.search(r"page 1 of (\d+)", json.dumps(first)).group(1))
        assert pages >= 3
        for n in (2, 3):
            nxt = button(slack.responses()[-1], "Next")
            before = len(slack.responses())
            await h.action({**nxt, "block_id": "pages"})
            await h.responses(before + 1)
            assert f"page {n} of" in json.dumps(slack.responses()[-1])
        prev = button(slack.responses()[-1], "Prev")
        await h.action({**prev, "block_id": "pages"})
        await eventually(lambda: "page 2 of" in json.dumps(slack.responses()[-1]))
    assert slack.rejected == []


async def test_listener_errors_are_answered_not_raised(app, slack):
    """Item 5. Break tried: registering the listeners without guarded() -> no answer reaches the
    user for the unknown paper or the bad Home value (red)."""
    async with Harness(app, slack) as h:
        await h.done("subscribe diffusion models")
        before = len(slack.responses())
        r = await h.action(
            {
                "action_id": "vote_up",
                "value": "no-such-paper",
                "type": "button",
                "block_id": "act:no-such-paper",
            }
        )
        assert r.status_code == 200
        answer = (await h.responses(before + 1))[-1]
        assert answer["response_type"] == "ephemeral" and "no-such-paper" in json.dumps(answer)
        r = await home_action(h, "home_pause", "abc")
        assert r.status_code == 200
        await eventually(
            lambda: any(m == "chat.postMessage" and a["channel"] == "U1" for m, a in slack.calls)
        )
    told = [a["text"] for m, a in slack.calls if m == "chat.postMessage" and a["channel"] == "U1"]
    assert "no longer exists" in told[0]
    assert not app.store.channels.get(ChannelRef("slack", "C1", "T1")).paused


async def home_action(h: Harness, action_id: str, value: str, user: str = "U1", name=None):
    """A button press in the App Home: no channel and no response URL, as Slack sends it."""
    h.n += 1
    person = {"id": user} if name is None else {"id": user, "username": name, "name": name}
    payload = {
        "type": "block_actions",
        "team": {"id": "T1"},
        "user": person,
        "actions": [
            {
                "action_id": action_id,
                "value": value,
                "type": "button",
                "block_id": "home:x",
                "action_ts": f"{time.time():.6f}",
            }
        ],
        "trigger_id": f"trig-home-{h.n}",
        "container": {"type": "view", "view_id": "V1"},
        "view": {"id": "V1", "type": "home"},
        "api_app_id": "A1",
    }
    body = urlencode({"payload": json.dumps(payload)})
    return await h.post(body, "application/x-www-form-urlencoded")


def signed_raw(h: Harness, body: str, content_type: str, ts: str):
    from slack_sdk.signature import SignatureVerifier

    from tests.adapters.slack.test_slack_http import SECRET

    sig = SignatureVerifier(SECRET).generate_signature(timestamp=ts, body=body)
    headers = {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": sig,
        "Content-Type": content_type,
    }
    return h.http.post("/slack/events", content=body, headers=headers)


async def test_malformed_signed_requests_get_400_and_change_nothing(app, slack):
    """Item 6. Break tried: without the inbound guard middleware each case answers 500 (red)."""
    now = str(int(time.time()))
    form = urlencode(
        {
            "command": "/papers",
            "text": "subscribe x",
            "team_id": "T1",
            "channel_id": "C9",
            "user_id": "U1",
            "response_url": f"{slack.url}resp-1",
        }
    )
    event = json.dumps(
        {
            "type": "event_callback",
            "team_id": "T1",
            "event_id": "EvX",
            "event": {"type": "app_uninstalled"},
        }
    )
    cases = [
        (form, "application/x-www-form-urlencoded", "12ab"),  # non-numeric timestamp
        (form, "application/json", now),  # a form body sent as JSON
        ("payload=%7Bnot+json", "application/x-www-form-urlencoded", now),
        ("payload=" + json.dumps([1, 2]), "application/x-www-form-urlencoded", now),
        (event[: len(event) // 2], "application/json", now),  # truncated event body
        (json.dumps([event]), "application/json", now),  # JSON, but not an object
    ]
    async with Harness(app, slack) as h:
        for body, ctype, ts in cases:
            r = await signed_raw(h, body, ctype, ts)
            assert r.status_code == 400, (body[:40], r.status_code)
        assert (await h.command("help", sign=False)).status_code == 401  # bad signature: still 401
        await asyncio.sleep(0.3)
    assert slack.calls == [] and app.store.channels.all() == []


async def test_single_workspace_mode_refuses_other_teams(app, slack):
    """Item 7. Break tried: without the single-team middleware T999's command creates a channel
    that would be posted to with T1's token (red)."""
    async with Harness(app, slack) as h:
        r = await h.command("subscribe diffusion models", team="T999")
        assert r.status_code == 200 and "one workspace" in r.text
        await asyncio.sleep(0.3)
        assert app.store.channels.all() == [] and slack.responses() == []
        await h.done("subscribe diffusion models")  # its own team is served
    assert [c.ref.workspace for c in app.store.channels.all()] == ["T1"]


async def test_replayed_button_press_does_not_withdraw_the_vote(app, slack):
    """Item 8 (interactions). Break tried: dedup middleware removed -> the replay toggles the
    vote off (red)."""
    async with Harness(app, slack) as h:
        await h.done("subscribe diffusion models")
        ref = ChannelRef("slack", "C1", "T1")
        paper = app.digests.preview(ref, date(2026, 12, 1)).items[0].paper.id
        press = {"action_id": "vote_up", "value": paper, "type": "button", "action_ts": "17.1"}
        await h.action(press, trigger="trig-same")
        await eventually(lambda: app.channels.vote_counts(ref, paper) == (1, 0))
        assert (await h.action(press, trigger="trig-same")).status_code == 200  # the replay
        await asyncio.sleep(0.5)
        assert app.channels.vote_counts(ref, paper) == (1, 0)
        await h.action({**press, "action_ts": "18.2"})  # a real second press withdraws
        await eventually(lambda: app.channels.vote_counts(ref, paper) == (0, 0))


async def test_a_replayed_command_is_handled_once(app, slack):
    """Item 8 (commands). Break tried: request_key() returning None for commands -> two
    answers, the second 'already following' (red)."""
    form = urlencode(
        {
            "command": "/papers",
            "text": "subscribe diffusion models",
            "team_id": "T1",
            "channel_id": "C1",
            "user_id": "U1",
            "trigger_id": "trig-once",
            "response_url": f"{slack.url}resp-once",
        }
    )
    async with Harness(app, slack) as h:
        for _ in range(2):
            assert (await h.post(form, "application/x-www-form-urlencoded")).status_code == 200
        await h.responses(2, timeout=6)  # a second answer would arrive within this
    assert len(slack.responses()) == 1


async def home_of(h: Harness, slack: FakeSlack, user: str) -> str:
    before = sum(m == "views.publish" for m, _ in slack.calls)
    await h.event(
        {"type": "app_home_opened", "user": user, "tab": "home", "event_ts": "1"},
        event_id=f"Ev-home-{user}-{before}",
    )
    await eventually(lambda: sum(m == "views.publish" for m, _ in slack.calls) > before)
    return json.dumps([a for m, a in slack.calls if m == "views.publish"][-1], ensure_ascii=False)


async def test_home_shows_and_controls_only_the_users_channels(app, slack):
    """Item 2. Breaks tried: may_manage() returning True (U1 sees the private channel and can
    pause it: red); the action handlers skipping may_act() (pause of C2 goes through: red)."""
    topics = {"C1": "shared topic", "G2": "secret project", "C3": "admins only", "@U2": "theirs"}
    for ch, topic in topics.items():
        app.channels.follows.add(ChannelRef("slack", ch, "T1"), SubscriptionKind.TOPIC, topic)
    app.channels.follows.add(
        ChannelRef("slack", "@U1", "T1"), SubscriptionKind.TOPIC, "my own research"
    )
    app.channels.settings.set_option(ChannelRef("slack", "C3", "T1"), "admin-only", True)
    slack.members.update({"C1": {"U1", "U2"}, "G2": {"U2"}, "C3": {"U1", "U2"}})
    slack.admins.add("UADMIN")
    async with Harness(app, slack) as h:
        mine = await home_of(h, slack, "U1")
        assert "shared topic" in mine and "my own" in mine
        assert not any(t in mine for t in ("secret project", "admins only", "theirs"))
        everything = await home_of(h, slack, "UADMIN")
        assert "secret project" in everything and "admins only" in everything
        for ch in ("G2", "C3", "@U2"):
            target = app.store.channels.get(ChannelRef("slack", ch, "T1"))
            for action in ("home_pause", "home_preview"):
                await home_action(h, action, str(target.id))
        await asyncio.sleep(0.5)
        await eventually(
            lambda: (
                len([1 for m, a in slack.calls if m == "chat.postMessage" and a["channel"] == "U1"])
                == 6
            )
        )
        own = app.store.channels.get(ChannelRef("slack", "C1", "T1"))
        await home_action(h, "home_pause", str(own.id))
        await eventually(lambda: app.store.channels.get(own.ref).paused)
    assert not any(
        app.store.channels.get(ChannelRef("slack", c, "T1")).paused for c in ("G2", "C3", "@U2")
    )
    dms = [a for m, a in slack.calls if m == "chat.postMessage" and a["channel"] == "U1"]
    assert all("only manage" in a["text"] and "blocks" not in a for a in dms)
    assert slack.rejected == []


def nasty_paper() -> PaperRecord:
    title = "Attention @ scale ``` <!channel> <@U042> <https://evil.example|click>"
    return PaperRecord(
        id="nasty-1",
        source="jsonl",
        title=title,
        abstract_raw="",
        abstract="x @ y",
        authors=("Ada Lovelace",),
        venue="NeurIPS 2026",
        year=2026,
        links=Links(abs="https://arxiv.org/abs/2612.00001"),
    )


async def test_bibtex_export_is_uploaded_as_a_file_with_the_right_count(app, slack):
    """Item 3. Breaks tried: as_messages() inlining the attachment again (`<!channel>` and the
    backticks reach the message: red); counting '@' (says 3 entries: red)."""
    slack.join("C1")  # the bot was invited: the file may be shared there
    app.store.papers.upsert([nasty_paper()])
    async with Harness(app, slack) as h:
        await h.done("subscribe diffusion models")
        ref = ChannelRef("slack", "C1", "T1")
        app.channels.vote(ref, "U1", "nasty-1", 1)
        await h.done("export bibtex liked --public")
        answer = slack.responses()[-1]
        await h.done("export bibtex liked")
        private = slack.responses()[-1]
    text = json.dumps(answer)
    assert "1 BibTeX entry" in text and "```" not in text and "<!channel>" not in text
    assert answer["response_type"] == "in_channel"
    (shared,) = slack.shared_files("C1")
    assert shared["name"] == "digestbot-liked.bib" and "@inproceedings" in shared["content"]
    assert "<!channel>" in shared["content"]  # verbatim inside the file, which Slack never parses
    assert private["response_type"] == "ephemeral" and slack.shared_files("DU1")


async def test_a_public_export_where_the_bot_is_not_is_a_clear_private_error(app, slack):
    """`export bibtex --public` in a channel the bot was never invited to: Slack refuses the
    file (not_in_channel; channel_not_found for one it cannot see) and the user gets one short
    ephemeral error, no traceback, no file.

    Breaks that turn this red: the fake's files.completeUploadExternal skipping
    membership_refused (the file "arrives" in C1: the answer says "Sent as …"); send_file not
    catching SlackApiError (no answer at all, a traceback in the log); its error made public."""
    app.store.papers.upsert([nasty_paper()])
    async with Harness(app, slack) as h:
        await h.done("subscribe diffusion models")
        app.channels.vote(ChannelRef("slack", "C1", "T1"), "U1", "nasty-1", 1)
        for known, code in ((True, "not_in_channel"), (False, "channel_not_found")):
            slack.known.discard("C1")
            if known:
                slack.known.add("C1")
            before = len(slack.responses())
            await h.done("export bibtex liked --public")
            answer = (await h.responses(before + 1))[-1]
            text = json.dumps(answer)
            assert answer["response_type"] == "ephemeral", answer
            assert f"Could not attach digestbot-liked.bib (Slack said: {code})" in text, text
            assert "Traceback" not in text and "Sent as" not in text
    assert slack.shared_files("C1") == []


async def test_a_command_mentioning_payload_is_still_a_command(app, slack):
    """Found on the way (Bolt reads any form body containing "payload" as an interaction and
    answers 404). Break tried: dispatching through Bolt's own request parsing (404: red)."""
    async with Harness(app, slack) as h:
        await h.done("search payload attacks")
    answer = json.dumps(slack.responses()[-1])  # a search reply, whatever it found
    assert any(s in answer for s in ("papers match", "No papers", "No paper mentions 'payload'"))


async def test_mentions_in_topics_and_queries_arrive_escaped(app, slack):
    """Topics and queries are user text: `<!channel>` in them must never reach Slack as markup.
    Break seen red: blocks.escape() returning its text unchanged -> '<!channel>' in the
    in-channel `list --public` and the search answer."""
    async with Harness(app, slack) as h:
        await h.done("subscribe <!channel> @here & co")
        await h.done("list --public")
        shared = slack.responses()[-1]
        await h.done("search <!here> attacks")
        searched = slack.responses()[-1]
    assert shared["response_type"] == "in_channel"
    for answer in (shared, searched):
        text = json.dumps(answer)
        assert "<!channel>" not in text and "<!here>" not in text, text
    assert "&lt;!channel&gt; @here &amp; co" in json.dumps(shared)
    assert slack.rejected == []
