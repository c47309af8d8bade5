"""Bolt listeners, one register function per feature; each only parses, calls the core, renders."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.blocks import SlackMessage, cut, render
from bot.commands import Commands, Context, Reply
from bot.runner import DigestRunner
from digest.channels import ChannelService
from digest.models import ChannelRef
from digest.schedule import local_day

log = logging.getLogger(__name__)
UP, DOWN = {"+1", "thumbsup"}, {"-1", "thumbsdown"}


@dataclass
class SlackDeps:
    """What the listeners need from the composition root."""

    commands: Commands
    channels: ChannelService
    runner: DigestRunner | None = None
    on_schedule_change: Callable[[], None] = lambda: None
    on_uninstall: Callable[[str], Awaitable[None]] | None = None


def as_messages(reply: Reply) -> list[SlackMessage]:
    """A reply's messages; an attached file is shown inline as code blocks."""
    if reply.attachment is None:
        return render(reply)
    name, content = reply.attachment
    chunks = [content[i : i + 2900] for i in range(0, len(content), 2900)][:45]
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": f"```{c}```"}} for c in chunks]
    head = render(replace(reply, attachment=None))[0]
    return [SlackMessage(head.text, head.blocks + blocks[: 50 - len(head.blocks)])]


async def _respond(
    respond, reply: Reply, public: bool = False, replace_original: bool = False
) -> None:
    for i, msg in enumerate(as_messages(reply)):
        await respond(
            text=msg.text,
            blocks=msg.blocks,
            response_type="in_channel" if public else "ephemeral",
            replace_original=replace_original and i == 0,
        )


async def _context(
    deps: SlackDeps, client: AsyncWebClient, team: str, channel: str, user: str
) -> Context:
    """The core's view of the caller; admin status is only looked up where it matters."""
    ref = ChannelRef("slack", channel, team)
    known = await asyncio.to_thread(deps.channels.store.channels.get, ref)
    is_admin = True
    if known is not None and known.admin_only:
        info = (await client.users_info(user=user))["user"]
        is_admin = bool(
            info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner")
        )
    return Context(ref=ref, user=user, is_admin=is_admin, dm=ChannelRef("slack", f"@{user}", team))


async def _effects(deps: SlackDeps, reply: Reply, ctx: Context, respond) -> None:
    if reply.schedule_changed is not None:
        deps.on_schedule_change()
    if reply.deliver_now is not None and deps.runner is not None:
        channel = await asyncio.to_thread(deps.channels.channel, reply.deliver_now)
        day = local_day(datetime.now(UTC), channel.timezone)
        outcome = await deps.runner.run_now(reply.deliver_now, day)
        await respond(text=f"Today's digest: {outcome}.", response_type="ephemeral")


def register_commands(app: AsyncApp, deps: SlackDeps) -> None:
    """`/papers`: ack at once, then run the core and answer through the response URL."""

    @app.command("/papers")
    async def papers(ack, command, respond, client) -> None:
        await ack()
        text = (command.get("text") or "").strip()
        public = text.endswith("--public")  # replies are private unless asked for
        text = text.removesuffix("--public").strip()
        ctx = await _context(
            deps, client, command["team_id"], command["channel_id"], command["user_id"]
        )
        reply = await asyncio.to_thread(deps.commands.handle, text, ctx)
        await _respond(respond, reply, public=public and not reply.error)
        await _effects(deps, reply, ctx, respond)


def _with_counts(blocks: list[dict], paper_id: str, up: int, down: int) -> list[dict]:
    """The message's blocks with this paper's vote buttons showing the counts."""
    out = []
    for b in blocks:
        if b.get("type") == "actions" and b.get("block_id") == cut(f"act:{paper_id}", 255):
            labels = {
                "vote_up": f"👍 {up}" if up else "👍",
                "vote_down": f"👎 {down}" if down else "👎",
            }
            elems = [{**e, "text": {**e["text"], "text": labels.get(e.get("action_id"), e["text"]["text"])}}
                     for e in b["elements"]]  # fmt: skip
            b = {**b, "elements": elems}
        out.append(b)
    return out


def register_actions(app: AsyncApp, deps: SlackDeps) -> None:
    """Buttons: 👍/👎 (a second click withdraws), More like this, search pages, links."""

    async def vote(ack, body, action, client, respond, value: int) -> None:
        await ack()
        team, user = body["team"]["id"], body["user"]["id"]
        ref = ChannelRef("slack", body["channel"]["id"], team)
        paper_id = action["value"]
        await asyncio.to_thread(deps.channels.vote, ref, user, paper_id, value)
        up, down = await asyncio.to_thread(deps.channels.vote_counts, ref, paper_id)
        message = body.get("message")
        if message and not body.get("container", {}).get("is_ephemeral"):
            blocks = _with_counts(message.get("blocks", []), paper_id, up, down)
            await client.chat_update(
                channel=ref.channel_id,
                ts=message["ts"],
                text=message.get("text", ""),
                blocks=blocks,
            )

    @app.action("vote_up")
    async def vote_up(ack, body, action, client, respond) -> None:
        await vote(ack, body, action, client, respond, 1)

    @app.action("vote_down")
    async def vote_down(ack, body, action, client, respond) -> None:
        await vote(ack, body, action, client, respond, -1)

    async def rerun(ack, body, action, client, respond, text: str, replace_original: bool) -> None:
        await ack()
        ctx = await _context(
            deps, client, body["team"]["id"], body["channel"]["id"], body["user"]["id"]
        )
        reply = await asyncio.to_thread(deps.commands.handle, text, ctx)
        await _respond(respond, reply, replace_original=replace_original)

    @app.action("more_like")
    async def more_like(ack, body, action, client, respond) -> None:
        await rerun(ack, body, action, client, respond, f"similar {action['value']}", False)

    @app.action("page")
    async def page(ack, body, action, client, respond) -> None:
        await rerun(ack, body, action, client, respond, action["value"], True)

    @app.action(re.compile(r"^link_"))
    async def link(ack) -> None:
        await ack()  # link buttons open in the browser; Slack still notifies us
