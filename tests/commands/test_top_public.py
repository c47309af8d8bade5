"""`/papers top --public` (Slack) and `top public:True` (Discord) are read by everyone in the
channel: they count only the 👍 of channels everyone in the workspace can see (and the channel
asked in), never the asker's private channels; the private answer keeps the asker's view.

Breaks that turn these red (each tried): shared_channels() ignoring ``everyone`` (secret-lab's
paper and name in the public answer); Commands._run not passing ``shared`` to the handler (the
same); top_cmd not passing ``ctx.shared`` on (the same); Discord's run() not handing ``public``
to invoke() (room secret's paper in the public:True answer); ``everyone`` also applied to the
private answer (the member no longer sees secret-lab's paper when asking privately).
"""

from __future__ import annotations

import json

import pytest

from digest.models import ChannelRef, SubscriptionKind
from tests.adapters.discord.test_liked_marks_privacy import add_guild, text_channel
from tests.adapters.slack.test_slack_http import Harness
from tests.fakes.slack import FakeSlack
from tests.support.discord_app import discord_bot, dispatch, embed_text, slash


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1", "C2")
        fake.private.add("C2")
        fake.members.update({"C1": {"U1", "U2"}, "C2": {"U2"}})
        yield fake


@pytest.mark.asyncio
async def test_slack_public_top_leaves_out_the_askers_private_channels(app, slack):
    lab, secret = ChannelRef("slack", "C1", "T1"), ChannelRef("slack", "C2", "T1")
    app.channels.claim(lab, "U2", "ml-reading", True)
    app.channels.claim(secret, "U2", "secret-lab", False)
    for ref in (lab, secret):
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    a, b = (p.id for p in app.papers.papers(2))
    app.channels.vote(lab, "U1", a, 1)
    app.channels.vote(secret, "U2", b, 1)
    hidden = app.papers.paper(b).title[:40]
    async with Harness(app, slack) as h:
        await h.done("top", user="U2")
        private = json.dumps(slack.responses()[-1], ensure_ascii=False)
        await h.done("top --public", user="U2")
        shared = slack.responses()[-1]
    public = json.dumps(shared, ensure_ascii=False)
    assert shared.get("response_type") == "in_channel", shared
    assert "secret-lab" in private and hidden in private  # the asker's own view
    assert "secret-lab" not in public and hidden not in public, public
    assert app.papers.paper(a).title[:40] in public and "#ml-reading" in public
    assert "everyone here can see" in public
    assert slack.rejected == []


@pytest.mark.asyncio
async def test_discord_public_top_leaves_out_channels_not_everyone_may_view(app, monkeypatch):
    refs = {c: ChannelRef("discord", c, "77") for c in ("111", "222")}
    app.channels.claim(refs["111"], "42", "lab", True)
    app.channels.claim(refs["222"], "42", "secret", False)
    for ref in refs.values():
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    a, b = (p.id for p in app.papers.papers(2))
    app.channels.vote(refs["111"], "5", a, 1)
    app.channels.vote(refs["222"], "42", b, 1)
    hidden = app.papers.paper(b).title[:40]
    async with discord_bot(app, monkeypatch) as bot:
        add_guild(bot.client)
        # room 222 hides from @everyone but lets member 42 (the asker) in
        secret = text_channel("222", "secret", hidden=True)
        secret["permission_overwrites"].append(
            {"id": "42", "type": 1, "allow": str(1 << 10), "deny": "0"}
        )
        bot.client._connection.parse_channel_update(secret)
        await dispatch(bot.client, slash("top", "tok-private", channel="111"))
        await dispatch(bot.client, slash("top", "tok-public", channel="111", public=True))
        said = {
            t: "\n".join(embed_text(m) for m in [*bot.fake.edits[t], *bot.fake.followups[t]])
            for t in ("tok-private", "tok-public")
        }
    assert hidden in said["tok-private"] and "#secret" in said["tok-private"], said
    assert hidden not in said["tok-public"] and "#secret" not in said["tok-public"], said
    assert app.papers.paper(a).title[:40] in said["tok-public"]
