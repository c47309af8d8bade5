"""Characters that cannot be stored (lone surrogates) or that show nothing (format characters,
spaces and punctuation alone)."""

from __future__ import annotations

import re
import unicodedata

#: Lone UTF-16 surrogates: half a character (a JSON ``\ud800`` escape, an emoji pair cut in
#: two). Python strings may hold them, but no UTF-8 text can: a database write would fail.
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogates(text: str) -> bool:
    """True if ``text`` holds a lone surrogate, which cannot be stored or shown."""
    return _SURROGATE.search(text) is not None


def drop_surrogates(text: str) -> str:
    """``text`` without lone surrogates (each is half of a character, so nothing readable goes)."""
    return _SURROGATE.sub("", text)


def has_visible(text: str) -> bool:
    """True if ``text`` has a letter, digit or symbol: zero-width and other format characters,
    spaces and punctuation alone show nothing a person could read back or match on."""
    return any(unicodedata.category(c)[0] in "LNS" for c in text)
