"""Numeric CLI options, read by the same parser as chat numbers (full-width digits included)."""

from __future__ import annotations

from collections.abc import Callable

from digest.text import whole_number

#: Bounds no real use reaches; beyond them a number is a typo (and SQLite's integers overflow).
MAX_LIST = 100_000
MAX_OFFSET = 1_000_000_000
MAX_RESULTS = 1_000
MAX_PAGE = 1_000_000


def whole(option: str, low: int, high: int | None = None) -> Callable[[str | int], int]:
    """A typer ``parser`` for ``option``: a whole number in [low, high] or one `error:` line."""

    def parse(text: str | int) -> int:
        return whole_number(str(text), option, low, high)  # typer passes defaults as ints

    return parse
