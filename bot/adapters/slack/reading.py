"""Slack's side of the reading group: the poll's "🗳 Vote for this" buttons, run as the
`reading-group vote` command (the core decides; this only translates)."""

from __future__ import annotations

import asyncio

from slack_bolt.async_app import AsyncApp

from bot.adapters.deps import Deps
from bot.adapters.slack.listener_errors import guarded
from bot.commands import Context
from bot.commands.core import Args
from bot.commands.reading_replies import VOTE
from digest.models import ChannelRef


def register_reading(app: AsyncApp, deps: Deps) -> None:
    """A vote button: '<poll id> <paper id>'; the answer is for the voter alone."""

    async def vote(ack, body, action, respond) -> None:
        await ack()
        team, user = body["team"]["id"], body["user"]["id"]
        ctx = Context(ref=ChannelRef("slack", body["channel"]["id"], team), user=user)
        poll, _, paper = action["value"].partition(" ")
        args = Args.typed("vote", paper, poll)
        reply = await asyncio.to_thread(deps.commands.invoke, "reading-group", ctx, args)
        text = deps.syntax(reply.text)
        await respond(text=text, response_type="ephemeral", replace_original=False)

    app.action(VOTE)(guarded(vote))
