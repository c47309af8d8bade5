"""A digest's reply as stored with its plan: a retry renders exactly what was planned."""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from functools import cache

from bot.commands.replies import Action, Card, Reply
from digest.models import ChannelRef


def dumps(reply: Reply) -> str:
    """The reply as JSON (every field: rendering it again gives the same messages)."""
    return json.dumps(reply, ensure_ascii=False, sort_keys=True, default=_fields)


@cache
def _names(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(kind))


def _fields(value: object) -> dict:
    """A dataclass as the JSON encoder's dict (``dataclasses.asdict`` without its deep copies:
    the encoder walks the lists and strings in C, and asks here only for the dataclasses in
    them; a tick renders thousands of replies)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {name: getattr(value, name) for name in _names(type(value))}
    raise TypeError(f"cannot store {type(value).__name__} in a reply")


def loads(text: str) -> Reply:
    """The reply ``dumps`` stored."""
    data = json.loads(text)
    cards = tuple(
        Card(
            **{
                **c,
                "actions": tuple(Action(**a) for a in c["actions"]),
                # stored before mentions existed: none
                "mentions": tuple(c.get("mentions") or ()),
            }
        )
        for c in data["cards"]
    )
    refs = {
        k: ChannelRef(**data[k]) if data[k] else None for k in ("deliver_now", "schedule_changed")
    }
    attachment = tuple(data["attachment"]) if data["attachment"] else None
    return Reply(
        **{
            **data,
            **refs,
            "cards": cards,
            "attachment": attachment,
            "actions": tuple(Action(**a) for a in data["actions"]),
        }
    )
