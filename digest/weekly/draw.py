"""Drawing a weekly picture in this process; a running bot draws in a child process instead
(bot/runtime/background.py), so its own process stays free to answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from digest.weekly.stats import WeeklyStats


def draw_here(stats: WeeklyStats, title: str) -> bytes:
    """Draw in this process (one-shot commands: a child would cost more than it saves)."""
    from digest.weekly.chart import draw  # matplotlib loads here, and only here

    return draw(stats, title)
