"""Bolt event listeners: 👍/👎 reactions on digest items, the App Home tab, uninstalls."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from functools import partial

from slack_bolt.async_app import AsyncApp

from bot.adapters.deps import Deps
from bot.adapters.slack.access import (
    asks_top,
    manageable,
    may_act,
    note_public,
    user_name,
    visible_channels,
)
from bot.adapters.slack.blocks import unescape
from bot.adapters.slack.home import home_view
from bot.adapters.slack.limits import view_problems
from bot.adapters.slack.listener_errors import guarded
from bot.adapters.slack.listeners import (
    DOWN,
    UP,
    DirectOutlet,
    as_messages,
    channel_ref,
    handled,
    voting_for,
)
from bot.adapters.slack.uploads import file_by_id
from bot.commands import Context, Reply
from bot.commands.core import Args
from bot.commands.reactions import reaction
from digest.errors import DigestError
from digest.models import Channel, ChannelRef

log = logging.getLogger(__name__)
#: A pause nobody chose: say how to end it once the app is back (a reinstall resumes nothing).
RESUME = "once it is reinstalled, `/papers resume` here (or Resume in the app's Home) restarts it"
FALLBACK_HOME = {
    "type": "home",
    "blocks": [
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": "This page could not be shown. `/papers list` lists your digests.",
            },
        }
    ],
}


def register_reactions(app: AsyncApp, deps: Deps) -> None:
    """Reactions count as votes (retried deliveries are dropped before this, see dedup)."""

    async def react(event: dict, added: bool, client, team: str) -> None:
        item = event.get("item") or {}
        name = event.get("reaction", "").split("::")[0]  # skin tones: +1::skin-tone-3
        value = 1 if name in UP else -1 if name in DOWN else 0
        if item.get("type") != "message" or value == 0:
            return
        user, where, ts = event["user"], item["channel"], item["ts"]
        refs = [f"{where}:{ts}"]
        if where.startswith("D"):  # a personal digest in the user's DM with the app
            refs.append(f"@{user}:{ts}")
        value = value if added else 0
        ask = await asyncio.to_thread(reaction, deps.commands, "slack", user, refs, value)
        if ask is None:
            if value > 0 and team:  # a 👍 others' digests may name: is the channel public?
                await note_public(client, deps.channels, channel_ref(team, where, user))
            return
        # several papers in that message: ask the reacting person alone which one they meant
        for msg in as_messages(ask):
            if where.startswith("D"):  # their DM with the app: nobody else reads it
                await client.chat_postMessage(channel=where, text=msg.text, blocks=msg.blocks)
            else:
                await client.chat_postEphemeral(
                    channel=where, user=user, text=msg.text, blocks=msg.blocks
                )

    async def added(event, body, client) -> None:
        await react(event, True, client, str(body.get("team_id") or ""))

    async def removed(event, body, client) -> None:
        await react(event, False, client, str(body.get("team_id") or ""))

    app.event("reaction_added")(guarded(added))
    app.event("reaction_removed")(guarded(removed))


async def publish_home(client, deps: Deps, team: str, user: str) -> None:
    """Publish ``user``'s Home tab: the digests they may see (see access.manageable)."""
    visible = await manageable(client, deps.channels, team, user)
    view = await asyncio.to_thread(home_view, deps.channels, visible)
    if problems := view_problems(view):  # never send what Slack refuses: say why, show a stub
        log.error(
            "Home tab of %s not published as built; Slack would refuse it: %s",
            user,
            "; ".join(problems[:3]),
        )
        view = FALLBACK_HOME
    await client.views_publish(user_id=user, view=view)


async def home_target(deps: Deps, body: dict, action: dict, client) -> Channel:
    """The channel a Home button names, if this user may act on it (else a DigestError)."""
    value = action.get("value", "")
    channel = None
    if value.isdigit():
        channel = await asyncio.to_thread(deps.channels.lookup.by_id, int(value))
    if channel is None:
        raise DigestError("That digest no longer exists; reopen the Home tab.")
    if not await may_act(client, channel, body["team"]["id"], body["user"]["id"]):
        raise DigestError("You can only manage digests of channels you are a member of.")
    return channel


def register_home(app: AsyncApp, deps: Deps) -> None:
    """The Home tab and its quick actions (pause, resume, preview to your DM), one access rule."""

    async def opened(event, body, client) -> None:
        if event.get("tab", "home") == "home":
            await publish_home(client, deps, body.get("team_id", ""), event["user"])

    async def toggle(ack, body, action, client, paused: bool) -> None:
        await ack()
        channel = await home_target(deps, body, action, client)
        person = body["user"]
        # who paused, in words: Slack sends the handle with a button press; if not, ask for it
        name = person.get("username") or person.get("name") or await user_name(client, person["id"])
        name = name or person["id"]
        reason = f"paused by {name}" if paused else None
        await asyncio.to_thread(deps.channels.settings.set_paused, channel.ref, paused, reason)
        deps.effects.schedule_changed()
        await publish_home(client, deps, body["team"]["id"], body["user"]["id"])

    async def pause(ack, body, action, client) -> None:
        await toggle(ack, body, action, client, True)

    async def resume(ack, body, action, client) -> None:
        await toggle(ack, body, action, client, False)

    async def preview(ack, body, action, client) -> None:
        await ack()
        channel = await home_target(deps, body, action, client)
        ctx = Context(ref=channel.ref, user=body["user"]["id"])
        reply = await asyncio.to_thread(deps.commands.handle, "digest preview", ctx)
        reply = voting_for(reply, channel.id)  # shown in the DM, its votes count for the channel
        for msg in as_messages(reply):  # to the user's DM with the app: nobody else sees it
            await client.chat_postMessage(
                channel=body["user"]["id"], text=msg.text, blocks=msg.blocks
            )

    app.event("app_home_opened")(guarded(opened))
    for action_id, listener in (
        ("home_pause", pause),
        ("home_resume", resume),
        ("home_preview", preview),
    ):
        app.action(action_id)(guarded(listener))


def register_messages(app: AsyncApp, deps: Deps) -> None:
    """Direct messages to the app are `/papers me` commands: "search diffusion" just works."""

    async def direct(event, body, client) -> None:
        text = unescape(event.get("text") or "").strip().removeprefix("/papers").strip()
        sent = event.get("subtype") == "file_share" and text.lower().split(" ", 1)[0] == "import"
        if event.get("channel_type") != "im" or event.get("bot_id"):
            return  # our own posts and other bots' are not commands
        if event.get("subtype") and not sent:
            return  # edits, joins and files sent without `import` are not commands either
        user, where, team = event["user"], event["channel"], body.get("team_id", "")
        me = ChannelRef("slack", f"@{user}", team)
        command = text if text.lower().split(" ", 1)[0] in ("me", "help", "") else f"me {text}"
        # A message event carries no name, and only a pause reason shows one ("paused by ann",
        # not U…): Slack is asked for it then, not on every message.
        pauses = "pause" in command.lower().split()[:2]
        name = await user_name(client, user) if pauses else ""
        ctx = Context(ref=me, user=user, dm=me, personal=True, name=name)
        if asks_top(command):  # counts only the channels this person can see
            ctx = replace(ctx, visible=await visible_channels(client, deps.channels, team, user))
        if sent:  # `import` with the file attached to the message itself
            files = event.get("files") or [{}]
            got = await file_by_id(client, str(files[0].get("id") or ""))
            if isinstance(got, Reply):
                reply = got
            else:
                work = partial(deps.commands.invoke, "import", ctx, Args.typed(file=got), True)
                reply = await asyncio.to_thread(work)
        else:  # `import` alone takes the file shared here just before, as `/papers import` does
            reply = await handled(deps, client, command, ctx, where)
        await deps.effects.carry_out(reply, DirectOutlet(client, where, user))

    app.event("message")(guarded(direct))


def register_lifecycle(app: AsyncApp, deps: Deps) -> None:
    """tokens_revoked / app_uninstalled pause the workspace's channels; their data stays."""

    async def disable(team: str, reason: str) -> None:
        # One statement over the team's channels: a workspace with thousands of channels is
        # paused at once, not read whole and written one channel at a time.
        await asyncio.to_thread(deps.channels.settings.pause_workspace, "slack", team, reason)
        deps.effects.schedule_changed()
        if deps.on_uninstall is not None:
            await deps.on_uninstall(team)

    async def revoked(body) -> None:
        await disable(body.get("team_id", ""), f"Slack tokens were revoked; {RESUME}")

    async def uninstalled(body) -> None:
        await disable(body.get("team_id", ""), f"the app was uninstalled; {RESUME}")

    app.event("tokens_revoked")(guarded(revoked))
    app.event("app_uninstalled")(guarded(uninstalled))
