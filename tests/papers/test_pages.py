"""The one search pager: one key format on the one clock, for Slack and Discord alike.

Breaks that turn this red: keep() reading the host's time.time() instead of the clock it was
given (the fixed clock's hour is not in the key); recall() without the legacy prefixes (a button
posted by the previous version, before an upgrade, answers "no longer stored" during its day);
keep() deleting only its own prefix (legacy searches kept for ever); a key longer than Discord's
button template takes (16 hex digits).
"""

from datetime import UTC, datetime, timedelta

from digest.papers.pages import LEGACY, PREFIX, UNEXPIRING, SearchPages

NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def test_a_key_names_the_hour_on_the_given_clock_and_pages_for_a_day(app):
    clock = Clock(NOON)
    pages = SearchPages(app.store, clock)
    key = pages.keep("search graphs page:2")
    assert len(key) == 16 and key[:6] == f"{int(NOON.timestamp() // 3600):06x}"
    assert pages.recall(key) == "search graphs page:2"
    clock.now = NOON + timedelta(hours=23)
    pages.keep("search trees page:2")
    assert pages.recall(key) == "search graphs page:2"  # still within its day
    clock.now = NOON + timedelta(hours=25)
    pages.keep("search lattices page:2")
    assert pages.recall(key) is None


def test_searches_kept_by_the_previous_version_still_page_and_expire(app):
    clock = Clock(NOON)
    hour = int(NOON.timestamp() // 3600)
    for prefix in LEGACY:
        app.store.kv.set(f"{prefix}{hour:06x}aaaa", f"kept by {prefix}")
    app.store.kv.set(f"{UNEXPIRING}0000", "kept for ever")
    pages = SearchPages(app.store, clock)
    assert pages.recall(f"{hour:06x}aaaa") == f"kept by {LEGACY[0]}"
    assert pages.recall("0000") == "kept for ever"
    pages.keep("search x page:2")
    assert pages.recall("0000") is None  # the unexpiring kind goes on the first keep
    clock.now = NOON + timedelta(hours=25)
    pages.keep("search y page:2")
    assert all(app.store.kv.get(f"{p}{hour:06x}aaaa") is None for p in LEGACY)
    assert app.store.kv.get(PREFIX + pages.keep("search y page:2")) == "search y page:2"
