"""The one text sanitiser for everything the bot sends, on every platform.

Paper text comes from feeds, files and people: a title may carry a right-to-left override that
shows "fdp.exe" as "exe.pdf", zero-width characters that hide or split words, or terminal
control characters. Each adapter passes every reply (answers and digests alike) through
:func:`clean_reply` before rendering it, so no builder can forget a field.
"""

from __future__ import annotations

import re
from dataclasses import fields, is_dataclass, replace
from typing import TypeVar

from digest.models import ChannelRef

#: Bidi embeddings, overrides, isolates and marks (they reorder what is shown), zero-width and
#: other invisible characters (they hide or split words), Hangul fillers that render blank, and
#: every control character but the line feed and the tab (ESC, BEL, C1 codes reach terminals).
HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200e\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\ufff9-\ufffb\uffa0]"
)
#: ZWJ/ZWNJ join emoji and shape Persian or Indic words; beside ASCII they only hide things.
JOINER = re.compile("(?<=[\x00-\x7f])[\u200c\u200d]|[\u200c\u200d](?=[\x00-\x7f])")
#: Line and paragraph separators, and a carriage return, are line breaks everywhere we send.
BREAKS = re.compile("\r\n|[\r\u2028\u2029\x85]")

T = TypeVar("T")


def clean_text(text: str) -> str:
    """``text`` without characters that reorder, hide or control what is shown."""
    if not text or text.isascii() and text.isprintable():
        return text
    return JOINER.sub("", HIDDEN.sub("", BREAKS.sub("\n", text)))


def cut(text: str, limit: int) -> str:
    """At most ``limit`` characters, ending in an ellipsis when cut (a platform's field limit)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clean_reply(value: T) -> T:
    """``value`` (a Reply, Card, Action, or anything of strings, tuples and dataclasses) with
    every string in it cleaned (clean_text); bytes (a picture) and numbers are kept as they are."""
    return _clean(value)


def _clean(value):
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, tuple):
        return tuple(_clean(v) for v in value)
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, ChannelRef):  # where to post (deliver_now), not text anyone reads
        return value
    if is_dataclass(value) and not isinstance(value, type):
        changed = {
            f.name: new
            for f in fields(value)
            if f.init and (new := _clean(old := getattr(value, f.name))) != old
        }
        return replace(value, **changed) if changed else value
    return value
