"""Numbers as people type them (full-width digits too), the errors that name what was typed,
and counts in words."""

from __future__ import annotations

import re

from digest.errors import DigestError

# The full-width forms block (U+FF01-FF5E) and the ideographic space, as NFKC maps them.
_FULL_WIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}


def numeric_text(text: str) -> str:
    """A numeric argument as typed on any keyboard: full-width '２' and '０９：００' become ASCII
    (NFKC's mapping of the full-width block), so every number a command takes reads the same.
    Superscripts ('²') and other scripts' digits are not mapped, and the ASCII checks refuse them."""
    return text.translate(_FULL_WIDTH).strip()


def is_number(text: str) -> bool:
    """ASCII digits only: str.isdigit() also accepts '²' and other characters int() rejects."""
    return bool(re.fullmatch(r"[0-9]+", text))


def whole_number(text: str, what: str, low: int, high: int | None = None) -> int:
    """``text`` as a whole number from ``low`` to ``high`` (None: no top), typed on any keyboard;
    anything else is a DigestError naming ``what``. Chat arguments and CLI options share it."""
    digits = numeric_text(str(text))
    # a 5000-digit number is refused here, not by a ValueError from int()'s digit limit
    value = int(digits) if is_number(digits) and len(digits) <= 30 else low - 1
    if low <= value and (high is None or value <= high):
        return value
    span = f"from {low} up" if high is None else f"from {low} to {high}"
    raise DigestError(
        f"{what} must be a whole number {span}, {typed_value(str(text).strip(), digits)}."
    )


def typed_value(text: str, digits: str) -> str:
    """How an error names what was typed, never cut silently: a missing number, a huge one or long text is said so."""
    if not text:
        return "but no number was given"
    if is_number(digits) and len(digits) > 12:
        return f"got a {len(digits)}-digit number (out of range)"
    return f"got {text!r}" if len(text) <= 20 else f"got {text[:20] + '…'!r}"


def plural(n: int, noun: str) -> str:
    """'1 paper', '2 papers'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
