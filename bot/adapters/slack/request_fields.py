"""What a signed Slack request must carry before any listener sees it.

Slack always sends these fields; a request without them (a hand-made or broken client) would
otherwise fail deep inside Bolt (an IndexError on an empty ``actions`` list: 500) or inside a
listener (a KeyError after the ack: 200 with "Something went wrong"), or worse create a channel
named ``slack:T1/`` from an empty ``channel_id``. Such requests get 400 and change nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: Slack ids: team T…/E…, channel C…/G…/D…, user U…/W…; uppercase letters and digits only.
SLACK_ID = re.compile(r"[A-Z][A-Z0-9]{1,30}")


def _id(value: Any) -> bool:
    return isinstance(value, str) and SLACK_ID.fullmatch(value) is not None


def _nested_id(body: Mapping, key: str) -> bool:
    value = body.get(key)
    return isinstance(value, dict) and _id(value.get("id"))


def command_problem(form: Mapping[str, str]) -> str | None:
    """Why a slash-command form cannot be a real one (None: it can)."""
    if not form.get("command", "").startswith("/"):
        return "command is not a slash command"
    for key in ("team_id", "channel_id", "user_id"):
        if not _id(form.get(key)):
            return f"{key} is missing or not a Slack id"
    if "text" not in form or not form.get("response_url"):
        return "text or response_url is missing"
    return None


def action_problem(payload: Mapping[str, Any]) -> str | None:
    """Why an interaction payload cannot be a real one (None: it can)."""
    if not isinstance(payload.get("type"), str):
        return "payload has no type"
    if not _nested_id(payload, "user"):
        return "payload has no user id"
    if payload["type"] in ("view_submission", "view_closed"):
        view = payload.get("view")  # Bolt reads view.type and view.callback_id to route it
        ok = isinstance(view, dict) and all(
            isinstance(view.get(k), str) for k in ("type", "callback_id")
        )
        return None if ok else "payload's view has no type or callback_id"
    if payload["type"] != "block_actions":
        return None  # nothing else is listened to: Bolt answers it as unhandled
    actions = payload.get("actions")
    if not isinstance(actions, list) or not actions:
        return "actions is empty"
    if not all(isinstance(a, dict) and isinstance(a.get("action_id"), str) for a in actions):
        return "an action has no action_id"
    if not _nested_id(payload, "team") and not _nested_id(payload, "enterprise"):
        return "payload has no team id"
    channel = payload.get("channel")
    if channel is not None and not _nested_id(payload, "channel"):
        return "payload's channel has no id"  # the Home tab sends none; a present one needs an id
    return None


#: Event fields each listened-to event type needs (reactions also need item.channel and item.ts).
EVENT_NEEDS = {
    "reaction_added": ("user",),
    "reaction_removed": ("user",),
    "app_home_opened": ("user",),
}


def event_problem(body: Mapping[str, Any]) -> str | None:
    """Why an Events API body cannot be a real one (None: it can)."""
    if body.get("type") != "event_callback":
        return None  # url_verification and the like: Bolt's own business
    event = body.get("event")
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return "event is missing or has no type"
    if not _id(body.get("team_id")) and not _id(body.get("enterprise_id")):
        return "team_id is missing or not a Slack id"
    kind = event["type"]
    if any(not _id(event.get(k)) for k in EVENT_NEEDS.get(kind, ())):
        return f"{kind} event has no user"
    item = event.get("item") if isinstance(event.get("item"), dict) else {}
    on_message = kind.startswith("reaction_") and item.get("type") == "message"
    if on_message and not (_id(item.get("channel")) and isinstance(item.get("ts"), str)):
        return f"{kind} event has no item channel and ts"  # files' reactions carry neither
    return _message_problem(event) if kind == "message" else None


def _message_problem(event: Mapping[str, Any]) -> str | None:
    """A plain message (no subtype, not a bot's) must say who wrote it and where."""
    if event.get("subtype") or event.get("bot_id"):
        return None
    if not _id(event.get("user")) or not _id(event.get("channel")):
        return "message event has no user or channel"
    return None
