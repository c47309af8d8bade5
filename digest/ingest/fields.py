"""Field hygiene for parsed records: text checks, limits and years, each change reported as a note.

A note is one short warning (`title cut to 500 characters`); the parsers report it under the
record's line, as ``file:line: …``, and store the record anyway.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace
from typing import Any

from digest.models import Links
from digest.text.characters import drop_surrogates, has_surrogates

#: Limits of stored fields (docs/ingest.md, "Formats, limits and merging"): longer values are cut, with a note.
MAX_TITLE_CHARS = 500
MAX_ID_CHARS = 128
MAX_VENUE_CHARS = 200


def plain(value: Any, name: str, notes: list[str]) -> str:
    """A text field: NUL characters go, with a note (PostgreSQL refuses them); numbers and
    objects fail.

    A number where text belongs (`"abstract": 123`) is a broken export, not a paper titled "123".
    Lone surrogates (a JSON ``\\ud800`` escape: half a character, which no UTF-8 text can hold)
    are dropped with a note: the rest of the record is sound, and only an unreadable half
    character goes, as stray bad bytes are replaced when a file is decoded.
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        kind = (
            "a number" if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
        raise ValueError(f"{name!r} must be text, got {kind or type(value).__name__}")
    if has_surrogates(value):
        notes.append(f"{name!r} held a lone surrogate (half a character, e.g. \\ud800): dropped")
        value = drop_surrogates(value)
    if "\x00" in value:
        notes.append(f"{name!r} held a NUL character: dropped")
    return value.replace("\x00", "")


def split_list(value: Any, name: str, notes: list[str]) -> tuple[str, ...]:
    """Authors/keywords given as a list of text or as 'a, b and c' / 'a; b'; numbers fail."""
    if value is None:
        return ()
    if isinstance(value, list | tuple):
        items = [plain(v, name, notes).strip() for v in value]
        return tuple(v for v in items if v)
    parts = re.split(r";|,|\band\b|\|", plain(value, name, notes))
    return tuple(p.strip() for p in parts if p.strip())


def cut(text: str, limit: int, name: str, notes: list[str], had: int | None = None) -> str:
    """``text`` cut to ``limit`` characters, with a note saying so when it was longer
    (``had``: the length as given, when ``text`` was cleaned from it)."""
    if len(text) <= limit:
        return text
    notes.append(f"{name} cut to {limit:,} characters (it had {had or len(text):,})")
    return text[:limit]


def safe_links(links: Links, notes: list[str]) -> Links:
    """``links`` with text that can be stored: a link that is not text is left out."""
    clean = {}
    for f in fields(links):
        value = getattr(links, f.name)
        clean[f.name] = (
            plain(value, f"{f.name} link", notes) or None if isinstance(value, str) else None
        )
    return replace(links, **clean)


# A year on its own: not inside a longer number (12026). A value that is a decimal number with a
# fraction (2026.5) is not a year either (2026.0 is 2026), so a broken value is "not a year"
# rather than silently truncated; a dotted date (2026.05.01) still gives its year.
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
_DECIMAL = re.compile(r"\s*\d+\.\d*\s*")


def year(value: Any) -> int | None:
    """The year in a ``year`` field or a venue name (`NeurIPS 2026`), None if it holds none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) or _DECIMAL.fullmatch(str(value)):
        number = float(value)
        if not number.is_integer():  # 2026.5, NaN, inf
            return None
        value = int(number)
    m = _YEAR.search(str(value if value is not None else ""))
    return int(m.group(1)) if m else None


def year_note(value: Any, stored: int | None = None) -> str | None:
    """The warning for a ``year`` given but holding no year (``stored``: the venue's year)."""
    if value is None or value == "" or year(value) is not None:
        return None
    kept = f"stored with the venue's {stored}" if stored else "stored without it"
    return f"'year' {str(value)[:20]!r} is not a year: {kept}"
