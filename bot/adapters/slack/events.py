"""Bolt event listeners: 👍/👎 reactions on digest items, the App Home tab, uninstalls."""

from __future__ import annotations

import asyncio
import logging

from slack_bolt.async_app import AsyncApp

from bot.adapters.slack.home import home_view
from bot.adapters.slack.listeners import DOWN, UP, SlackDeps, as_messages
from bot.commands import Context

log = logging.getLogger(__name__)


def register_reactions(app: AsyncApp, deps: SlackDeps) -> None:
    """Reactions count as votes; retried deliveries of the same event set the same vote again."""

    async def react(event: dict, added: bool) -> None:
        item = event.get("item") or {}
        name = event.get("reaction", "").split("::")[0]  # skin tones: +1::skin-tone-3
        value = 1 if name in UP else -1 if name in DOWN else 0
        if item.get("type") != "message" or value == 0:
            return
        ref_msg = f"{item['channel']}:{item['ts']}"
        await asyncio.to_thread(
            deps.channels.react, "slack", event["user"], ref_msg, value if added else 0
        )

    @app.event("reaction_added")
    async def added(event) -> None:
        await react(event, True)

    @app.event("reaction_removed")
    async def removed(event) -> None:
        await react(event, False)


def register_home(app: AsyncApp, deps: SlackDeps) -> None:
    """The Home tab and its quick actions (pause, resume, preview to your DM)."""

    async def publish(client, team: str, user: str) -> None:
        view = await asyncio.to_thread(home_view, deps.channels, team, user)
        await client.views_publish(user_id=user, view=view)

    @app.event("app_home_opened")
    async def opened(event, body, client) -> None:
        if event.get("tab", "home") == "home":
            await publish(client, body.get("team_id", ""), event["user"])

    async def toggle(ack, body, action, client, paused: bool) -> None:
        await ack()
        channel = await asyncio.to_thread(deps.channels.store.channels.by_id, int(action["value"]))
        if channel is not None and channel.ref.workspace == body["team"]["id"]:
            reason = f"paused by {body['user']['id']}" if paused else None
            await asyncio.to_thread(deps.channels.set_paused, channel.ref, paused, reason)
            deps.on_schedule_change()
        await publish(client, body["team"]["id"], body["user"]["id"])

    @app.action("home_pause")
    async def pause(ack, body, action, client) -> None:
        await toggle(ack, body, action, client, True)

    @app.action("home_resume")
    async def resume(ack, body, action, client) -> None:
        await toggle(ack, body, action, client, False)

    @app.action("home_preview")
    async def preview(ack, body, action, client) -> None:
        await ack()
        channel = await asyncio.to_thread(deps.channels.store.channels.by_id, int(action["value"]))
        if channel is None or channel.ref.workspace != body["team"]["id"]:
            return
        ctx = Context(ref=channel.ref, user=body["user"]["id"])
        reply = await asyncio.to_thread(deps.commands.handle, "digest preview", ctx)
        for msg in as_messages(reply):  # to the user's DM with the app: nobody else sees it
            await client.chat_postMessage(
                channel=body["user"]["id"], text=msg.text, blocks=msg.blocks
            )


def register_lifecycle(app: AsyncApp, deps: SlackDeps) -> None:
    """tokens_revoked / app_uninstalled pause the workspace's channels; their data stays."""

    async def disable(team: str, reason: str) -> None:
        channels = await asyncio.to_thread(deps.channels.store.channels.all)
        for ch in channels:
            if ch.ref.platform == "slack" and ch.ref.workspace == team and not ch.paused:
                await asyncio.to_thread(deps.channels.set_paused, ch.ref, True, reason)
        deps.on_schedule_change()
        if deps.on_uninstall is not None:
            await deps.on_uninstall(team)

    @app.event("tokens_revoked")
    async def revoked(body) -> None:
        await disable(body.get("team_id", ""), "Slack tokens were revoked")

    @app.event("app_uninstalled")
    async def uninstalled(body) -> None:
        await disable(body.get("team_id", ""), "the app was uninstalled from this workspace")
