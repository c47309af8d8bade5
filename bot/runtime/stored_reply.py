"""A digest's reply as stored with its plan: a retry renders exactly what was planned."""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from functools import cache, lru_cache

from bot.commands.replies import Action, Card, Reply
from digest.models import ChannelRef


def dumps(reply: Reply) -> str:
    """The reply as JSON (every field: rendering it again gives the same messages)."""
    return json.dumps(_plain(reply), ensure_ascii=False, sort_keys=True)


@cache
def _names(kind: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(kind))


def _plain(value: object) -> object:
    """``dataclasses.asdict`` for JSON, without its deep copies (a tick renders thousands)."""
    if isinstance(value, Card):
        return _card(value)
    if is_dataclass(value) and not isinstance(value, type):
        return {name: _plain(getattr(value, name)) for name in _names(type(value))}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


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
    return Reply(
        **{
            **data,
            **refs,
            "cards": cards,
            "attachment": attachment,
            "actions": tuple(Action(**a) for a in data["actions"]),
        }
    )


@lru_cache(maxsize=4096)
def _card(card: Card) -> dict:
    """A card as plain data; the same paper's card recurs across channels. Callers only
    serialise it, never change it."""
    return {name: _plain(getattr(card, name)) for name in _names(Card)}
