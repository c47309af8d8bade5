"""The Bolt app driven through its HTTP endpoints by real signed requests, against a fake Slack API."""

import asyncio
import json
import time
from datetime import date
from urllib.parse import urlencode

import httpx
import pytest
from aiohttp import web
from slack_sdk.signature import SignatureVerifier
from sqlalchemy import event

from bot.adapters.deps import Deps
from bot.adapters.slack.app import SlackConfig, build_slack
from bot.runtime.effects import EffectExecutor
from bot.runtime.runner import DigestRunner
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef
from digest.rank.why import title_ref
from tests.fakes.slack import FakeSlack
from tests.support.corpus import synthetic_records

SECRET = "test-signing-secret"
pytestmark = pytest.mark.asyncio


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")  # the bot was invited to them; a post anywhere else is refused
        yield fake


async def eventually(condition, timeout: float = 15.0) -> None:
    """Wait until ``condition()`` holds: Bolt acks first and runs listeners afterwards."""
    for _ in range(int(timeout / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)
    assert condition(), "condition not reached in time"


class Harness:
    """A running Bolt app on a local port, with helpers to send signed Slack requests."""

    def __init__(self, app, slack, oauth=False, poke=lambda: None):
        self.app, self.slack = app, slack
        cfg = SlackConfig(
            bot_token=None if oauth else "xoxb-test",
            signing_secret=SECRET,
            api_url=slack.url,
            client_id="111.222" if oauth else None,
            client_secret="shh" if oauth else None,
        )
        # as the composition root does: the executor reaches the runner only when a reply asks
        deliver = lambda ref, day: self.digests.run_now(ref, day)  # noqa: E731
        effects = EffectExecutor(app.channels, deliver, poke)
        self.deps = Deps(app.commands, app.channels, effects)
        self.runtime = build_slack(cfg, app.store.engine, self.deps)
        self.runtime.poster.min_interval = 0
        self.digests = DigestRunner(Deliveries(app.papers, "w1"), {"slack": self.runtime.poster})
        self.n = 0

    async def __aenter__(self):
        self.runner = web.AppRunner(self.runtime.web_app())
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.base = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
        self.http = httpx.AsyncClient(base_url=self.base, timeout=10)
        return self

    async def __aexit__(self, *exc):
        await self.http.aclose()
        await self.runner.cleanup()

    async def post(
        self, body: str, content_type: str, ts: int | None = None, sign=True, headers=None
    ):
        ts = ts or int(time.time())
        sig = (
            SignatureVerifier(SECRET).generate_signature(timestamp=str(ts), body=body)
            if sign
            else "v0=bad"
        )
        h = {
            "X-Slack-Request-Timestamp": str(ts),
            "X-Slack-Signature": sig,
            "Content-Type": content_type,
        }
        return await self.http.post("/slack/events", content=body, headers={**h, **(headers or {})})

    async def command(self, text: str, user="U1", channel="C1", team="T1", user_name=None, **kw):
        self.n += 1
        form = {
            "command": "/papers",
            "text": text,
            "team_id": team,
            "channel_id": channel,
            "user_id": user,
            "response_url": f"{self.slack.url}resp-{self.n}",
            "trigger_id": f"trig-{self.n}",
        }
        if user_name is not None:  # Slack sends the caller's handle too
            form["user_name"] = user_name
        return await self.post(urlencode(form), "application/x-www-form-urlencoded", **kw)

    async def done(self, text: str, **kw):
        """A command, then wait for its answer: Bolt acks first and runs the command afterwards."""
        before = len(self.slack.responses())
        assert (await self.command(text, **kw)).status_code == 200
        assert len(await self.responses(before + 1)) > before, f"no answer to {text!r}"

    async def action(
        self, action: dict, message: dict | None = None, channel="C1", user="U1", trigger=None
    ):
        self.n += 1
        action = {"action_ts": f"{time.time():.6f}", **action}
        payload = {
            "type": "block_actions",
            "team": {"id": "T1"},
            "user": {"id": user},
            "channel": {"id": channel},
            "actions": [action],
            "response_url": f"{self.slack.url}resp-act",
            "trigger_id": trigger or f"trig-{self.n}",
            "container": {"type": "message", "is_ephemeral": message is None},
            "api_app_id": "A1",
        }
        if message:
            payload["message"] = message
        return await self.post(
            urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded"
        )

    async def event(self, event: dict, headers=None, event_id="Ev1"):
        body = json.dumps(
            {
                "type": "event_callback",
                "team_id": "T1",
                "api_app_id": "A1",
                "event": event,
                "event_id": event_id,
                "event_time": int(time.time()),
            }
        )
        return await self.post(body, "application/json", headers=headers)

    async def responses(self, n: int, timeout: float = 15.0) -> list[dict]:
        for _ in range(int(timeout / 0.05)):
            if len(self.slack.responses()) >= n:
                break
            await asyncio.sleep(0.05)
        return self.slack.responses()


async def test_bad_signature_and_stale_timestamp_get_401(app, slack):
    async with Harness(app, slack) as h:
        assert (await h.command("help", sign=False)).status_code == 401
        assert (await h.command("help", ts=int(time.time()) - 600)).status_code == 401
        assert (await h.command("help")).status_code == 200


async def test_subscribe_round_trip_over_signed_http(app, slack):
    async with Harness(app, slack) as h:
        assert (await h.command("subscribe diffusion models")).status_code == 200
        (resp,) = await h.responses(1)
        assert resp[
            "response_type"
        ] == "ephemeral" and "Now following topic 'diffusion models'" in json.dumps(resp)
        await h.command("list --public")
        listing = (await h.responses(2))[-1]
        assert listing["response_type"] == "in_channel" and "diffusion models" in json.dumps(
            listing
        )
    ref = ChannelRef("slack", "C1", "T1")
    assert [s.text for s in app.channels.subscriptions(ref)] == ["diffusion models"]


async def test_a_slow_core_still_acks_within_three_seconds(app, slack, monkeypatch):
    async with Harness(app, slack) as h:
        real = h.deps.commands.handle

        def slow(text, ctx):
            time.sleep(4)
            return real(text, ctx)

        monkeypatch.setattr(h.deps.commands, "handle", slow)
        started = time.monotonic()
        assert (await h.command("help")).status_code == 200
        assert time.monotonic() - started < 3
        assert await h.responses(1, timeout=8)


async def test_vote_buttons_record_toggle_update_counts_and_shape_the_next_digest(app, slack):
    async with Harness(app, slack) as h:
        await h.done("subscribe graph neural networks")
        ch = app.store.channels.get(ChannelRef("slack", "C1", "T1"))
        assert (await h.digests.run_channel(ch.id, date(2026, 12, 1))).startswith("posted")
        posted = slack.messages["C1"][0]
        liked = [
            b["block_id"].removeprefix("act:") for b in posted["blocks"] if b["type"] == "actions"
        ][0]
        up = {"action_id": "vote_up", "value": liked, "type": "button", "block_id": f"act:{liked}"}
        await h.action(up, message=posted)
        await eventually(lambda: any(m == "chat.update" for m, _ in slack.calls))
        update = next(a for m, a in slack.calls if m == "chat.update")
        assert "👍 1" in json.dumps(update["blocks"], ensure_ascii=False)
        assert app.channels.vote_counts(ch.ref, liked) == (1, 0)
        profile = app.channels.profile(ch)
        assert profile.votes == ((liked, 1),)
        fresh = [r for r in synthetic_records(per_topic=34) if r.id.startswith("syn-gnn-3")]
        app.store.papers.upsert(fresh)  # day 2: new GNN papers arrive
        preview = app.digests.preview(ch.ref, date(2026, 12, 2))
        title = title_ref(app.store.papers.get_many([liked])[liked].title)
        assert preview.items and any(
            f"like {title}, which you liked" in i.why for i in preview.items
        )  # the why-line names the paper this channel liked
        await h.action(up, message=posted)  # a second click withdraws the vote
        await eventually(lambda: app.channels.vote_counts(ch.ref, liked) == (0, 0))


async def test_event_retries_are_dropped_even_after_a_later_event_and_in_another_process(
    app, slack
):
    """Item 8. Breaks tried: no dedup middleware -> the late retry brings the vote back (red);
    dedup kept in process memory -> the second process handles the retry (red)."""
    async with Harness(app, slack) as h:
        await h.done("subscribe diffusion models")
        await h.done("option threads on")
        ch = app.store.channels.get(ChannelRef("slack", "C1", "T1"))
        await h.digests.run_channel(ch.id, date(2026, 12, 1))
        item = slack.messages["C1"][1]  # first paper's thread reply
        seen = []
        real_react = app.channels.react

        def counted(*a):
            result = real_react(*a)
            seen.append(a)  # counted once handled, so the next step cannot overtake it
            return result

        app.channels.react = counted
        reaction = {
            "type": "reaction_added",
            "user": "U2",
            "reaction": "+1",
            "item": {"type": "message", "channel": "C1", "ts": item["ts"]},
            "event_ts": "1",
        }
        retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
        assert (await h.event(reaction)).status_code == 200
        assert (await h.event(reaction, headers=retry)).status_code == 200
        await eventually(lambda: len(seen) == 1)
        assert [(v.user, v.value) for v in app.store.channels.feedback(ch.id)] == [("U2", 1)]
        await h.event({**reaction, "type": "reaction_removed"}, event_id="Ev2")
        await eventually(lambda: len(seen) == 2)
        assert app.store.channels.feedback(ch.id) == []
        assert (await h.event(reaction, headers=retry)).status_code == 200  # a late retry
    async with Harness(app, slack) as other:  # another process on the same database
        assert (await other.event(reaction, headers=retry)).status_code == 200
        await asyncio.sleep(0.5)
    assert len(seen) == 2 and app.store.channels.feedback(ch.id) == []


async def test_search_pages_replace_the_original_message(app, slack):
    async with Harness(app, slack) as h:
        await h.command("search graph neural networks")
        (first,) = await h.responses(1)
        page = next(
            e for b in first["blocks"] if b.get("block_id") == "pages" for e in b["elements"]
        )
        await h.action(
            {"action_id": "page", "value": page["value"], "type": "button", "block_id": "pages"}
        )
        replaced = (await h.responses(2))[-1]
        assert replaced["replace_original"] in (True, "true") and "page 2 of" in json.dumps(
            replaced
        )


async def test_uninstall_pauses_the_workspace_channels_and_keeps_their_data(app, slack):
    async with Harness(app, slack) as h:
        await h.done("subscribe diffusion models")
        await h.event({"type": "app_uninstalled", "event_ts": "1"})
        await eventually(lambda: app.store.channels.get(ChannelRef("slack", "C1", "T1")).paused)
    ch = app.store.channels.get(ChannelRef("slack", "C1", "T1"))
    assert ch.paused and "uninstalled" in ch.paused_reason
    assert [s.text for s in app.channels.subscriptions(ch.ref)] == ["diffusion models"]


async def test_uninstall_pauses_a_large_workspace_in_one_statement(app, slack):
    """Issue 21: 40 channels of T1, one of them already paused for its own reason, and one of
    T2. The uninstall pauses T1's 39 active channels with one UPDATE over the team's channels,
    keeps the earlier pause's reason, and leaves T2 alone. Breaks that turn this red: the
    handler walking every channel and pausing each (40 reads, 39 writes); the UPDATE without
    its workspace condition (T2 paused too) or without `paused is false` (the reason lost)."""
    refs = [ChannelRef("slack", f"C{i}", "T1") for i in range(40)]
    for ref in refs:
        app.channels.channel(ref)
    app.channels.settings.set_paused(refs[0], True, "paused by a member")
    other = app.channels.channel(ChannelRef("slack", "C1", "T2")).ref
    updates: list[str] = []

    def seen(conn, cursor, statement, *_):  # noqa: ANN001 - SQLAlchemy's event signature
        if statement.lstrip().upper().startswith("UPDATE CHANNELS"):
            updates.append(statement)

    event.listen(app.store.engine, "before_cursor_execute", seen)
    try:
        async with Harness(app, slack) as h:
            await h.event({"type": "app_uninstalled", "event_ts": "1"})
            await eventually(lambda: app.store.channels.get(refs[-1]).paused)
    finally:
        event.remove(app.store.engine, "before_cursor_execute", seen)
    assert len(updates) == 1, updates
    chans = [app.store.channels.get(r) for r in refs]
    assert all(c.paused for c in chans)
    assert chans[0].paused_reason == "paused by a member"
    assert all("uninstalled" in c.paused_reason for c in chans[1:])
    assert not app.store.channels.get(other).paused


async def test_oauth_callback_stores_the_installation_used_for_posting(app, slack):
    async with Harness(app, slack, oauth=True) as h:
        from bot.adapters.slack.stores import StateStore

        state = await StateStore(app.store.engine).async_issue()
        resp = await h.http.get(
            f"/slack/oauth_redirect?code=abc&state={state}",
            headers={"Cookie": f"slack-app-oauth-state={state}"},
        )
        assert resp.status_code == 200
        assert await h.runtime.poster.tokens("T7") == "xoxb-installed"
        assert await h.runtime.poster.tokens("T404") is None
