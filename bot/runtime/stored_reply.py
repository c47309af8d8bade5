"""A digest's reply as stored with its plan: a retry renders exactly what was planned."""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from functools import cache, lru_cache

from bot.commands.replies import Action, Card, Reply
from digest.models import ChannelRef


def dumps(reply: Reply) -> str:
    """The reply as JSON (every field: rendering it again gives the same messages).

    The same text as ``json.dumps(reply, sort_keys=True)`` would give, but each card's JSON is
    made once (a tick renders the same few papers' cards for thousands of channels, and most of
    a reply is its cards): the fields before and after ``cards`` are encoded around them."""
    data = _fields(reply)
    cards = ", ".join(map(_card, data.pop("cards")))
    head = {k: v for k, v in data.items() if k < "cards"}
    tail = {k: v for k, v in data.items() if k > "cards"}
    return f'{_dump(head)[:-1]}, "cards": [{cards}], {_dump(tail)[1:]}'


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=_fields)


@lru_cache(maxsize=4096)
def _card(card: Card) -> str:
    return _dump(card)


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
