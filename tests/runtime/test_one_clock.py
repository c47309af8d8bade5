"""One clock (issue 24): business time ("now" for due times, delivery days, votes, ingest
stamps) is read from digest/clock/__init__.py's clock, built once by the composition root and handed
down; nothing under bot/ or digest/ reads the host's wall clock on its own.

The database's clock (leases, claims) and monotonic timers (timeouts, latency) are not what
this scans for: `time.monotonic`/`perf_counter` are not wall-clock reads.
"""

from __future__ import annotations

import ast
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Calls that read the host's wall clock: (object, attribute).
WALL_CLOCK = {
    ("datetime", "now"),
    ("datetime", "utcnow"),
    ("datetime", "today"),
    ("date", "today"),
    ("time", "time"),
}
#: Files still allowed their wall-clock reads, with how many (a new one in them is red too).
ALLOWED = {
    "digest/clock/__init__.py": 1,  # the clock itself
    # APScheduler's timers run on the host's clock: a timer set from the business clock would
    # fire at the wrong moment whenever the two differ (a test's fixed clock).
    "bot/runtime/scheduler.py": 3,
    # The adapters belong to the reply-effects work (helper "effects"): `digest now` from Slack
    # (its day) should read the clock from its deps; the de-duplication stamp is a row's age.
    "bot/adapters/slack/listeners.py": 1,  # a stored search's hour (its key prefix), not business time
    "bot/adapters/slack/bolt_middleware.py": 1,
    # Not business time: the hour a page button's stored search was made (its key's prefix,
    # purged after hours) and an HTTP Retry-After date, which is against the host's clock.
    "bot/adapters/discord/interact.py": 1,
    "digest/ingest/fetch.py": 1,
    # Slack's files.list window ("shared in the last hour") is asked in Slack's own timestamps.
    "bot/adapters/slack/uploads.py": 1,
}


def wall_clock_reads(tree: ast.AST) -> list[str]:
    """Every ``datetime.now(…)``, ``datetime.datetime.now(…)``, ``date.today()``, ``time.time()``…"""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", None)
        if (name, node.func.attr) in WALL_CLOCK:
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def _reads() -> Counter[str]:
    files = [*sorted((ROOT / "bot").rglob("*.py")), *sorted((ROOT / "digest").rglob("*.py"))]
    assert len(files) > 80  # the walk really found both packages
    counts: Counter[str] = Counter()
    for f in files:
        found = wall_clock_reads(ast.parse(f.read_text(encoding="utf-8"), str(f)))
        if found:
            counts[str(f.relative_to(ROOT))] = len(found)
    return counts


def test_nothing_reads_the_wall_clock_but_the_clock():
    """Breaks that turn this red: `now = datetime.now(UTC)` back in `digestbot channels`
    (bot/cli/channels.py); Context.now defaulting to `datetime.now(UTC)` again
    (bot/commands/core.py); the store stamping a vote with `datetime.now(UTC)`
    (digest/store/channels.py); bot/runtime/ops.py's /healthz ingest age from `datetime.now(UTC)`; a
    second `datetime.now()` in bot/runtime/scheduler.py (an allowed file: its count is fixed)."""
    counts = _reads()
    over = {f: n for f, n in counts.items() if n > ALLOWED.get(f, 0)}
    assert over == {}, "read the time from the clock (digest/clock/__init__.py) instead"


def test_the_allow_list_shrinks_when_a_file_is_fixed():
    """An allowed file that no longer reads the wall clock leaves the list (so the list stays
    the truth, and a fixed file cannot silently regress)."""
    counts = _reads()
    stale = {f: n for f, n in ALLOWED.items() if counts.get(f, 0) < n}
    assert stale == {}, "lower or remove these entries in ALLOWED"


def test_the_scan_catches_each_spelling():
    code = (
        "import datetime as dt, time\n"
        "from datetime import UTC, date, datetime\n"
        "a = datetime.now(UTC)\n"
        "b = dt.datetime.now()\n"
        "c = date.today()\n"
        "d = time.time()\n"
        "e = time.monotonic()\n"
        "f = clock()\n"
        "g = self.store.now()\n"
    )
    assert wall_clock_reads(ast.parse(code)) == [
        "line 3: datetime.now(UTC)",
        "line 4: dt.datetime.now()",
        "line 5: date.today()",
        "line 6: time.time()",
    ]


def test_a_commands_now_comes_from_the_apps_clock(app, monkeypatch):
    """A chat command with no time of its own (the adapters pass none) reads the one clock:
    with the clock a week ahead, `list` says that week's digest. Breaks that turn this red:
    Context.now defaulting to datetime.now(UTC) again; Commands not filling it in from
    ChannelService.clock."""
    from bot.commands import Context
    from digest.models import ChannelRef, SubscriptionKind

    ahead = datetime(2030, 6, 3, 7, 0, tzinfo=UTC)  # a Monday, before the 09:00 digest
    monkeypatch.setattr(app.channels, "clock", lambda: ahead)
    ref = ChannelRef("console", "lab")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    text = app.commands.handle("list", Context(ref, "u1")).text
    assert "Next digest: Mon 03 Jun 09:00 UTC" in text, text
    later = ahead + timedelta(days=1)
    monkeypatch.setattr(app.channels, "clock", lambda: later)
    assert (
        "Next digest: Tue 04 Jun 09:00 UTC" in app.commands.handle("list", Context(ref, "u1")).text
    )


def test_rows_are_stamped_by_the_stores_clock(tmp_path):
    """A channel's creation, a vote and an ingest are stamped by the clock the store was given
    (catch-up never posts a day before a channel existed: that date must be the clock's).
    Breaks that turn this red: ChannelRepo.ensure or PaperRepo.upsert stamping with
    datetime.now(UTC) instead of self.clock()."""
    from digest.models import ChannelRef
    from digest.store import Store
    from tests.fakes.recording import FixedClock

    clock = FixedClock(datetime(2031, 1, 2, 3, 4, tzinfo=UTC))
    store = Store.open(f"sqlite:///{tmp_path / 'c.db'}", clock=clock)
    try:
        channel = store.channels.ensure(ChannelRef("console", "lab"))
        assert channel.created_at is not None
        assert channel.created_at.astimezone(UTC) == clock.now
    finally:
        store.close()
