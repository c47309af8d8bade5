"""Looking at a personal digest nobody set up never creates it, on any platform."""

import pytest

from bot.commands import Context
from digest.models import ChannelRef
from tests.adapters.slack.test_slack_dm import dm, said, slack  # noqa: F401 - the fake Slack fixture
from tests.adapters.slack.test_slack_http import Harness, eventually

CONSOLE = Context(ChannelRef("console", "lab"), "you", dm=ChannelRef("console", "@you"))
SLACK_DM = Context(ChannelRef("slack", "@U1", "T1"), "U1", dm=ChannelRef("slack", "@U1", "T1"))
DISCORD_DM = Context(
    ChannelRef("discord", "@42", "dm"),
    "42",
    True,
    ChannelRef("discord", "@42", "dm"),
    personal=True,
)


@pytest.mark.parametrize(
    ("ctx", "text"),
    [
        (CONSOLE, "/papers me list"),
        (CONSOLE, "/papers me digest now"),
        (CONSOLE, "/papers me digest preview"),
        (CONSOLE, "/papers me stats"),
        (CONSOLE, "/papers me why syn-rl-0"),
        (CONSOLE, "/papers me export bibtex all"),
        (CONSOLE, "/papers me unsubscribe all"),
        (SLACK_DM, "list"),
        (DISCORD_DM, "stats"),
    ],
)
def test_reading_an_unknown_personal_digest_creates_nothing(app, ctx, text):
    """Breaks that turn this red: dropping the READS_CHANNEL check in Commands._run (list and
    stats create `console:@you` / `slack:T1/@U1` with no subscriptions, which the scheduler then
    served); checking only `me` commands, not the DM's own ref (the Slack DM `list`, the Discord DM
    `stats`)."""
    before = len(app.store.channels.all())
    reply = app.commands.handle(text, ctx)
    assert reply.error and "no personal digest yet" in reply.text and "me subscribe" in reply.text
    assert reply.deliver_now is None
    assert len(app.store.channels.all()) == before


def test_setting_up_a_personal_digest_still_creates_it(app):
    """Break that turns this red: refusing every `me` command on an unknown personal digest."""
    assert not app.commands.handle("/papers me subscribe reinforcement learning", CONSOLE).error
    reply = app.commands.handle("/papers me list", CONSOLE)
    assert not reply.error and "reinforcement learning" in reply.text


@pytest.mark.asyncio
async def test_a_slack_dm_list_answers_without_creating_the_digest(app, slack):  # noqa: F811
    """Break that turns this red: dropping the READS_CHANNEL check (the DM `list` creates
    slack:T1/@U1)."""
    async with Harness(app, slack) as h:
        await dm(h, "list")
        await eventually(lambda: len(said(slack, "DU1")) == 1)
    assert "no personal digest yet" in said(slack, "DU1")[0]
    assert app.store.channels.all() == []


SHARED = [
    Context(ChannelRef("console", "lab"), "you", dm=ChannelRef("console", "@you")),
    Context(
        ChannelRef("slack", "C9", "T1"), "U1", is_admin=False, dm=ChannelRef("slack", "@U1", "T1")
    ),
    Context(ChannelRef("discord", "111", "77"), "42", dm=ChannelRef("discord", "@42", "dm")),
]
READS = [
    "list",
    "stats",
    "why syn-rl-0",
    "digest preview",
    "digest now",
    "export bibtex all",
    "unsubscribe all",
    "list --public",
]


@pytest.mark.parametrize("ctx", SHARED, ids=lambda c: c.ref.platform)
@pytest.mark.parametrize("text", READS)
def test_reading_a_shared_channel_nobody_set_up_creates_nothing(app, ctx, text):
    """`/papers list` (and every other read) in a channel that was never set up answers that it
    has no digest yet and creates no channel row (it created one, with default settings, which
    `digestbot channels` and the Home tab then listed). Breaks that turn this red: the
    READS_CHANNEL check in Commands._run limited to personal digests again (`@…` refs only)."""
    reply = app.commands.handle(text, ctx)
    assert reply.error and "has no digest yet" in reply.text and "subscribe" in reply.text
    assert reply.deliver_now is None
    assert app.store.channels.all() == []


def test_setting_up_a_shared_channel_still_creates_it(app):
    """Break that turns this red: refusing settings on an unknown channel too."""
    ctx = SHARED[0]
    assert not app.commands.handle("schedule 08:00", ctx).error
    assert not app.commands.handle("list", ctx).error
    assert len(app.store.channels.all()) == 1
