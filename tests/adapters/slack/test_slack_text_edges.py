"""Slack's text edges (issue 23): what people type, what papers contain, long searches, odd shapes.

Breaks that turn this red: the command text used without unescape() ("R&amp;D" stored, echoed as
"R&amp;amp;D"); escape() without dropping HIDDEN (U+202E and U+200B reach Slack in a card);
stored_pages() not applied (a 2,100-character search's Next value is cut at 2,000 and page 2
never comes); stored_pages() without its range delete (stored searches kept for ever) or
keyed without the hour (the delete drops fresh ones or none); the Home state rendered with plain() (zero-width spaces inside `/papers resume`);
action_problem() without the view check (a view_submission with no view.type gets 500).
"""

from __future__ import annotations

import json
import time
from urllib.parse import urlencode

import pytest

from bot.adapters.slack.blocks import card_blocks
from bot.adapters.slack.home import home_view
from bot.commands.replies import Card
from digest.models import ChannelRef, SubscriptionKind
from tests.adapters.slack.test_slack_behaviour import button, signed_raw
from tests.adapters.slack.test_slack_http import Harness
from tests.fakes.slack import FakeSlack

C1 = ChannelRef("slack", "C1", "T1")


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")
        yield fake


@pytest.mark.asyncio
async def test_typed_ampersands_and_brackets_are_what_was_typed(app, slack):
    async with Harness(app, slack) as h:
        await h.done("subscribe R&amp;D robotics")  # Slack sends a typed & as &amp;
        await h.done("exclude a &lt;beta&gt; c")
        await h.done("list")
        listed = json.dumps(slack.responses()[-1], ensure_ascii=False)
    texts = [s.text for s in app.channels.subscriptions(C1)]
    assert "R&D robotics" in texts and "a <beta> c" in texts
    assert "R&amp;D robotics" in listed and "&amp;amp;" not in listed
    assert slack.rejected == []


@pytest.mark.asyncio
async def test_a_search_longer_than_a_button_value_still_pages(app, slack):
    query = " ".join(["learning"] * 240)  # about 2,150 characters
    async with Harness(app, slack) as h:
        await h.done(f"search {query}")
        first = slack.responses()[-1]
        assert "page 1 of" in json.dumps(first)
        nxt = button(first, "Next")
        assert len(nxt["value"]) <= 2000
        before = len(slack.responses())
        await h.action({**nxt, "block_id": "pages"})
        await h.responses(before + 1)
    assert "page 2 of" in json.dumps(slack.responses()[-1])
    assert slack.rejected == []


def test_stored_searches_expire_after_a_day_so_they_stay_bounded(app):
    """Every long search stored for its Next button goes a day later, on a later store."""
    from datetime import UTC, datetime, timedelta
    from types import SimpleNamespace

    import time_machine
    from sqlalchemy import func, select
    from sqlalchemy.orm import Session

    from bot.adapters.slack.listeners import PAGED, stored_pages
    from bot.commands.replies import Action, Reply
    from digest.papers.pages import PREFIX as PAGER_KEY
    from digest.papers.pages import UNEXPIRING
    from digest.store.schema import KeyValueRow

    deps = SimpleNamespace(pages=app.pages)
    app.store.kv.set(UNEXPIRING + "0" * 20, "search x page:2")  # from an older version

    def store_at(when: datetime, n: int) -> str:
        value = f"search {'learning ' * 250}{n} page:2"
        reply = Reply(text="x", actions=(Action("page", "Next ▶", value, page=2),))
        with time_machine.travel(when, tick=False):
            return stored_pages(deps, reply).actions[0].value.removeprefix(PAGED)

    def kept() -> int:
        kept_here = KeyValueRow.key.startswith("slack.page") | KeyValueRow.key.startswith(PAGER_KEY)
        stmt = select(func.count()).where(kept_here)
        with Session(app.store.engine) as session:
            return session.scalar(stmt.select_from(KeyValueRow))

    start = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    first = store_at(start, 0)
    assert app.store.kv.get(PAGER_KEY + first) and kept() == 1  # the older version's one went
    for hour in range(1, 24 * 7):  # a week of one long search an hour
        store_at(start + timedelta(hours=hour), hour)
        assert kept() <= 26  # a day's worth, never the week's
    assert app.store.kv.get(PAGER_KEY + first) is None


@pytest.mark.asyncio
async def test_a_view_submission_without_a_view_type_is_400(app, slack):
    payload = {
        "type": "view_submission",
        "team": {"id": "T1"},
        "user": {"id": "U1"},
        "api_app_id": "A1",
        "view": {"id": "V1"},
    }
    body = urlencode({"payload": json.dumps(payload)})
    async with Harness(app, slack) as h:
        r = await signed_raw(h, body, "application/x-www-form-urlencoded", str(int(time.time())))
    assert r.status_code == 400


def test_reordering_and_invisible_characters_never_reach_slack():
    c = Card("p1", "Safe\u202etxt.exe\u200b title", None, "Ann\u2066", "", "gpj.\u202eexe")
    text = json.dumps(card_blocks(c), ensure_ascii=False)
    assert not any(ch in text for ch in "\u202e\u2066") and "\u200b title" not in text


def test_the_home_shows_how_to_resume_with_a_copyable_command(app):
    app.channels.follows.add(C1, SubscriptionKind.TOPIC, "graphs")
    app.channels.settings.set_paused(
        C1, True, "the app was uninstalled; `/papers resume` restarts it"
    )
    view = json.dumps(home_view(app.channels, [app.store.channels.get(C1)]), ensure_ascii=False)
    assert "`/papers resume`" in view
