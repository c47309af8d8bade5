"""App Home content and actions, and the app manifest matching what the code listens for."""

import json
from pathlib import Path

import pytest
import yaml

from bot.adapters.slack.app import BOT_SCOPES
from bot.adapters.slack.limits import view_problems
from bot.commands.core import REGISTRY
from digest.models import ChannelRef, SubscriptionKind
from tests.adapters.slack.test_slack_http import Harness, eventually
from tests.fakes.slack import FakeSlack

MANIFEST = Path(__file__).resolve().parents[3] / "deploy" / "slack" / "manifest.yml"


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


def test_manifest_is_valid_yaml_with_the_command_scopes_and_events():
    m = yaml.safe_load(MANIFEST.read_text())
    (cmd,) = m["features"]["slash_commands"]
    assert cmd["command"] == "/papers" and "subscribe" in cmd["usage_hint"]
    assert set(m["oauth_config"]["scopes"]["bot"]) == set(BOT_SCOPES)
    assert {"commands", "chat:write", "reactions:read"} <= set(m["oauth_config"]["scopes"]["bot"])
    events = set(m["settings"]["event_subscriptions"]["bot_events"])
    assert events == {
        "app_home_opened",
        "reaction_added",
        "reaction_removed",
        "app_uninstalled",
        "tokens_revoked",
        "message.im",
    }
    assert (
        m["settings"]["socket_mode_enabled"] is True
        and m["settings"]["interactivity"]["is_enabled"] is True
    )
    assert "help" in REGISTRY


@pytest.mark.asyncio
async def test_app_home_lists_channels_and_its_pause_button_works(app, slack):
    ref = ChannelRef("slack", "C1", "T1")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    app.channels.follows.add(
        ChannelRef("slack", "@U1", "T1"), SubscriptionKind.TOPIC, "federated learning"
    )
    app.channels.follows.add(
        ChannelRef("slack", "@U2", "T1"), SubscriptionKind.TOPIC, "someone else's topic"
    )
    app.channels.follows.add(
        ChannelRef("slack", "C9", "T2"), SubscriptionKind.TOPIC, "another team's"
    )
    app.channels.follows.add(
        ChannelRef("discord", "C1", "T1"), SubscriptionKind.TOPIC, "a server's"
    )
    slack.members["C1"] = {"U1"}
    slack.members["C9"] = {"U1"}
    async with Harness(app, slack) as h:
        await h.event({"type": "app_home_opened", "user": "U1", "tab": "home", "event_ts": "1"})
        await eventually(lambda: any(m == "views.publish" for m, _ in slack.calls))
        view = json.dumps(
            next(a for m, a in slack.calls if m == "views.publish"), ensure_ascii=False
        )
        assert (
            "diffusion models" in view
            and "federated learning" in view
            and "someone else" not in view
        )
        assert "another team" not in view and "a server" not in view  # this workspace's only
        ch = app.store.channels.get(ref)
        await h.action(
            {
                "action_id": "home_pause",
                "value": str(ch.id),
                "type": "button",
                "block_id": f"home:{ch.id}",
            }
        )
        await eventually(lambda: app.store.channels.get(ref).paused)
    assert app.store.channels.get(ref).paused


@pytest.mark.asyncio
async def test_home_of_an_admin_with_many_channels_stays_within_slacks_view_limits(app, slack):
    """The fake refuses views over 100 blocks (shared validator). Break tried: MAX_HOME_BLOCKS
    = 150 -> views.publish refused and the 'more channels' line never shown (red)."""
    for i in range(60):
        app.channels.follows.add(
            ChannelRef("slack", f"C{i:03}", "T1"), SubscriptionKind.TOPIC, f"t{i}"
        )
    slack.admins.add("UADMIN")
    async with Harness(app, slack) as h:
        await h.event({"type": "app_home_opened", "user": "UADMIN", "tab": "home", "event_ts": "1"})
        await eventually(lambda: any(m == "views.publish" for m, _ in slack.calls))
    view = next(a for m, a in slack.calls if m == "views.publish")["view"]
    view = json.loads(view) if isinstance(view, str) else view
    assert slack.rejected == [] and view_problems(view) == []
    assert 90 < len(view["blocks"]) <= 100 and "more channels" in json.dumps(view)
    assert "`/papers subscribe &lt;topic&gt;`" in json.dumps(view, ensure_ascii=False)
