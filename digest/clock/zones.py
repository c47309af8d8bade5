"""Time zone names from people: IANA names in any case, common abbreviations, "did you mean"."""

from __future__ import annotations

import difflib
import logging
import re
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from digest.errors import DigestError

log = logging.getLogger(__name__)

#: Abbreviations people type that name one zone (DST and standard forms map to the same place).
ABBREVIATIONS = {
    "UTC": "UTC",
    "GMT": "UTC",
    "Z": "UTC",
    "PST": "America/Los_Angeles",
    "PDT": "America/Los_Angeles",
    "PT": "America/Los_Angeles",
    "MST": "America/Denver",
    "MDT": "America/Denver",
    "MT": "America/Denver",
    "EST": "America/New_York",
    "EDT": "America/New_York",
    "ET": "America/New_York",
    "CDT": "America/Chicago",
    "AKST": "America/Anchorage",
    "HST": "Pacific/Honolulu",
    "CET": "Europe/Paris",
    "CEST": "Europe/Paris",
    "EET": "Europe/Athens",
    "EEST": "Europe/Athens",
    "WET": "Europe/Lisbon",
    "MSK": "Europe/Moscow",
    "JST": "Asia/Tokyo",
    "KST": "Asia/Seoul",
    "SGT": "Asia/Singapore",
    "HKT": "Asia/Hong_Kong",
    "AEST": "Australia/Sydney",
    "AEDT": "Australia/Sydney",
    "NZST": "Pacific/Auckland",
    "NZDT": "Pacific/Auckland",
}
#: Abbreviations that name several zones: we ask instead of guessing.
AMBIGUOUS = {
    "CST": ("America/Chicago", "Asia/Shanghai"),
    "IST": ("Asia/Kolkata", "Europe/Dublin", "Asia/Jerusalem"),
    "BST": ("Europe/London", "Asia/Dhaka"),
    "AST": ("America/Halifax", "Asia/Riyadh"),
}
EXAMPLES = "e.g. Europe/Berlin, America/New_York or UTC"


@lru_cache(maxsize=1)
def _zones() -> dict[str, str]:
    """Every IANA zone by its lower-case name, plus unique city names ('berlin')."""
    names = {z for z in available_timezones() if "/" in z or z == "UTC"}
    by_lower = {z.lower(): z for z in names}
    cities: dict[str, set[str]] = {}
    for z in names:
        cities.setdefault(z.rsplit("/", 1)[-1].lower(), set()).add(z)
    for city, zones in cities.items():
        if len(zones) == 1 and city not in by_lower:
            by_lower[city] = next(iter(zones))
    return by_lower


def parse_timezone(text: str) -> str:
    """The IANA name for what a person typed, or a DigestError with a suggestion."""
    raw = " ".join(str(text).split())
    key = raw.upper()
    if key in ABBREVIATIONS:
        return ABBREVIATIONS[key]
    if key in AMBIGUOUS:
        options = " or ".join(AMBIGUOUS[key])
        raise DigestError(f"{raw!r} names several time zones; did you mean {options}?")
    wanted = re.sub(r"\s+", "_", raw).lower()
    zones = _zones()
    if wanted in zones:
        return zones[wanted]
    close = difflib.get_close_matches(wanted, zones, n=1, cutoff=0.75)
    hint = f"; did you mean {zones[close[0]]}?" if close else f" ({EXAMPLES})."
    raise DigestError(f"Unknown time zone {raw[:40]!r}{hint}")


def usable_timezone(name: str, fallback: str = "UTC") -> str:
    """``name`` if it still exists on this machine, else ``fallback`` with a warning (stored data)."""
    try:
        ZoneInfo(name)
        return name
    except (ZoneInfoNotFoundError, ValueError):
        log.warning("time zone %r no longer exists here; using %s", name, fallback)
        return fallback
