"""What a weekly picture shows: per-week counts for one channel (drawn by chart.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class WeeklyStats:
    """Per-week counts for one channel, oldest week first (``weeks`` are Mondays)."""

    weeks: tuple[date, ...]
    per_interest: dict[str, tuple[int, ...]]
    up: tuple[int, ...]
    down: tuple[int, ...]
    partial: bool = False  # the last week is still running (an on-demand picture)

    @property
    def empty(self) -> bool:
        """No paper and no vote in the whole span: nothing worth drawing."""
        return not any(sum(v) for v in self.per_interest.values()) and not sum(self.up + self.down)

    def span(self) -> str:
        """'weeks of 5 Oct – 23 Nov 2026' for titles and alt text; 'the week of 30 Nov 2026'
        for one week; each date with its year when the weeks span a new year."""
        first, last = self.weeks[0], self.weeks[-1]
        if first == last:
            return f"the week of {first:%-d %b %Y}"
        start = f"{first:%-d %b %Y}" if first.year != last.year else f"{first:%-d %b}"
        return f"weeks of {start} – {last:%-d %b %Y}"

    def count(self) -> str:
        """'8 weeks' or '1 week': how many weeks are drawn."""
        return f"{len(self.weeks)} week{'s' if len(self.weeks) != 1 else ''}"

    def alt_text(self) -> str:
        """A one-line summary of what the picture shows (its alt text)."""
        totals = sorted(((sum(v), k) for k, v in self.per_interest.items()), key=lambda t: -t[0])
        papers = sum(t for t, _ in totals)
        named = ", ".join(f"{k} {n}" for n, k in totals if n) or "none"
        up, down = sum(self.up), sum(self.down)
        rate = f" ({round(100 * up / (up + down))}% 👍)" if up + down else ""
        now = " (this week so far)" if self.partial else ""
        return (
            f"Papers matched per interest over the last {self.count()}, {self.span()}"
            f"{now}: {papers} in all ({named}); votes: {up} 👍, {down} 👎{rate}."
        )
