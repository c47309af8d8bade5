"""The one clock business time is read from: due times, delivery days, votes, ingest times.

The composition root (bot/app.py) builds it once and hands it down (store, services, commands,
CLI), so a test moves every "now" at once with a fake clock (tests/fakes/recording.py: FixedClock). The
database's own clock stays the source for leases and claims (digest/store/deliveries.py);
monotonic timers (timeouts, latency) are not business time and keep ``time.monotonic``.
Beside it, the pure rules of time as people type it: zones.py (time zones) and times.py
(digest times, weekdays, due times).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

#: A clock: called with nothing, it returns the current instant (timezone-aware, UTC).
Clock = Callable[[], datetime]


def system_clock() -> datetime:
    """The current instant in UTC, from the host."""
    return datetime.now(UTC)
