"""Slack's side of Zotero: the connect modal (views.open from the slash command's trigger_id),
its submission, and the "📚 Save to Zotero" button on every digest card."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.listener_errors import guarded
from bot.commands import Context
from bot.commands.core import Args
from bot.commands.handlers_zotero import FORM_FIELDS, FORM_TITLE, FORM_ZOTERO
from digest.models import ChannelRef

if TYPE_CHECKING:
    from bot.adapters.deps import Deps

CALLBACK = "zotero_connect"


def connect_view(team: str, channel: str) -> dict[str, Any]:
    """The modal: the library id and the API key. Slack has no masked input; the modal is seen
    by the person alone and its values go only to this app (never to a channel's history)."""
    blocks: list[dict[str, Any]] = [
        {
            "type": "input",
            "block_id": name,
            "label": {"type": "plain_text", "text": label},
            "element": {"type": "plain_text_input", "action_id": "value", "max_length": 64},
        }
        for name, label, _secret in FORM_FIELDS
    ]
    blocks.append(
        {
            "type": "context",
            "elements": [
                {
                    "type": "mrkdwn",
                    "text": "Create a key at zotero.org/settings/keys (read access; write access "
                    "to save papers). It is stored encrypted and deleted by "
                    "`/papers me zotero disconnect`.",
                }
            ],
        }
    )
    return {
        "type": "modal",
        "callback_id": CALLBACK,
        "title": {"type": "plain_text", "text": FORM_TITLE},
        "submit": {"type": "plain_text", "text": "Connect"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "private_metadata": json.dumps({"team": team, "channel": channel}),
        "blocks": blocks,
    }


async def open_form(client: AsyncWebClient, command: dict[str, Any]) -> None:
    """Open the connect modal for the person who typed the command."""
    view = connect_view(command["team_id"], command["channel_id"])
    await client.views_open(trigger_id=command["trigger_id"], view=view)


def _context(team: str, channel: str, user: str) -> Context:
    """The caller as the core sees them. Zotero is the person's own: no channel setting is
    changed, so no admin look-up (and no import of the listeners, which import this)."""
    ref = ChannelRef("slack", f"@{user}" if channel.startswith("D") else channel, team)
    return Context(ref=ref, user=user, dm=ChannelRef("slack", f"@{user}", team))


def register_zotero(app: AsyncApp, deps: Deps) -> None:
    """The modal's submission and the Save button."""

    async def submitted(ack, body, view, client) -> None:
        await ack()  # closes the modal; the answer comes by direct message
        user = body["user"]["id"]
        where = json.loads(view.get("private_metadata") or "{}")
        team = where.get("team") or body.get("team", {}).get("id", "")
        ctx = _context(team, where.get("channel") or "D", user)
        state = view["state"]["values"]
        values = {
            n: (state.get(n, {}).get("value", {}).get("value") or "") for n, _, _ in FORM_FIELDS
        }
        args = Args.typed("connect", library=values["library"], key=values["key"])
        reply = await asyncio.to_thread(deps.commands.invoke, "zotero", ctx, args, True)
        await client.chat_postMessage(channel=user, text=reply.text)

    async def save(ack, body, action, client, respond) -> None:
        await ack()
        ctx = _context(body["team"]["id"], body["channel"]["id"], body["user"]["id"])
        args = Args.typed(action["value"].split(" ")[0])
        reply = await asyncio.to_thread(deps.commands.invoke, "save", ctx, args)
        await respond(text=reply.text, response_type="ephemeral", replace_original=False)

    app.view(CALLBACK)(guarded(submitted))
    app.action("save")(guarded(save))


__all__ = ["FORM_ZOTERO", "open_form", "register_zotero"]
