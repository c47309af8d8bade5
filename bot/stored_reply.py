"""A digest's reply as stored with its plan: a retry renders exactly what was planned."""

from __future__ import annotations

import json
from dataclasses import asdict

from bot.commands.replies import Action, Card, Reply
from digest.models import ChannelRef


def dumps(reply: Reply) -> str:
    """The reply as JSON (every field: rendering it again gives the same messages)."""
    return json.dumps(asdict(reply), ensure_ascii=False, sort_keys=True)


def loads(text: str) -> Reply:
    """The reply ``dumps`` stored."""
    data = json.loads(text)
    cards = tuple(
        Card(**{**c, "actions": tuple(Action(**a) for a in c["actions"])}) for c in data["cards"]
    )
    refs = {
        k: ChannelRef(**data[k]) if data[k] else None for k in ("deliver_now", "schedule_changed")
    }
    attachment = tuple(data["attachment"]) if data["attachment"] else None
    return Reply(**{**data, **refs, "cards": cards, "attachment": attachment,
                    "actions": tuple(Action(**a) for a in data["actions"])})  # fmt: skip
