"""A preview after today's digest went out is the next digest, labelled and announced as such."""

import asyncio
import json
import re
from datetime import UTC, datetime, timedelta

from bot.commands import Context
from bot.runtime.runner import DigestRunner
from digest.clock.times import local_day
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from tests.fakes.recording import RecordingAdapter

LAB = ChannelRef("console", "lab")


def test_chat_preview_after_todays_digest_names_the_next_one(app):
    """Breaks that turn this red: `digest preview` composing for today whatever was sent (the
    reviewer's "📚 Papers for Mon 30 Nov" holding other papers than the posted digest), or
    leaving out the note that today's digest already went out."""
    app.channels.follows.add(LAB, SubscriptionKind.TOPIC, "graph neural networks")
    app.channels.settings.set_schedule(LAB, "09:00", "UTC", "daily")
    now = datetime.now(UTC)
    today = local_day(now, "UTC")
    before = app.commands.handle("/papers digest preview", Context(LAB, "u1", now=now))
    assert before.title == f"📚 Papers for {today:%a %d %b %Y}" and "Today's" not in before.text
    runner = DigestRunner(Deliveries(app.papers, "w1"), {"console": RecordingAdapter()})
    lab = app.store.channels.get(LAB)
    assert asyncio.run(runner.run_channel(lab.id, today)).startswith("posted")
    after = app.commands.handle("/papers digest preview", Context(LAB, "u1", now=now))
    tomorrow = today + timedelta(days=1)
    assert after.title == f"📚 Papers for {tomorrow:%a %d %b %Y}"
    assert re.match(
        rf"Today's digest: already delivered at \d\d:\d\d \(UTC\)\. This preview is what the "
        rf"next digest, {tomorrow:%a %d %b} 09:00 UTC, would hold\.",
        after.text,
    ), after.text
    sent = {c.paper_id for c in runner.adapters["console"].digests[0][1].cards}
    assert sent.isdisjoint(c.paper_id for c in after.cards)  # never the posted papers again


def test_cli_dry_run_after_todays_digest_names_the_next_one(env_isolated, capsys):
    """Every date here comes from one instant: the test freezes the clock and derives
    "tomorrow" from it, so the test cannot straddle midnight UTC (it ran `digestbot` in
    subprocesses, each reading the wall clock, and the test read it again afterwards).
    Breaks that turn this red: `digest --dry-run` previewing under today's date after today's
    digest was posted; `digest` reading the clock twice (with the clock frozen a second before
    midnight, the post and the preview would fall on different days)."""
    import time_machine

    from bot.cli.main import main

    # a day ahead of the wall clock, just before midnight: a date read twice may straddle it
    instant = (datetime.now(UTC) + timedelta(days=1)).replace(hour=23, minute=59, second=59)
    with time_machine.travel(instant, tick=False):  # every "now" in the process, one instant
        corpus = env_isolated / "papers.jsonl"
        rows = [
            {"id": f"p{i}", "title": f"Sparse autoencoders {i}", "abstract": "Sparse features."}
            for i in range(12)
        ]
        corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
        assert main(["ingest", str(corpus)]) == 0
        assert main(["cmd", "console:lab", "/papers subscribe sparse"]) == 0
        assert main(["cmd", "console:lab", "/papers schedule 00:00 UTC daily"]) == 0
        capsys.readouterr()
        assert main(["digest", "console:lab"]) == 0
        assert "posted" in capsys.readouterr().out
        assert main(["digest", "console:lab", "--dry-run", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        tomorrow = local_day(instant, "UTC") + timedelta(days=1)
        assert out["date"] == tomorrow.isoformat()
        assert out["outcome"].startswith("preview: Today's digest: already delivered at ")
        assert main(["digest", "console:lab", "--dry-run"]) == 0
        text = capsys.readouterr().out
        assert (
            text.startswith("Today's digest: already delivered")
            and f"{tomorrow:%a %d %b %Y}" in text
        )


def test_an_empty_next_digest_preview_says_no_paper_matches_yet(app):
    """Once today's digest went out, an empty preview is of the next digest: it must not say
    "No new papers matched today" (today's digest is another one). Breaks that turn this red:
    digest_cmd not passing ``upcoming`` to digest_reply; summary_line() ignoring it."""
    app.channels.follows.add(LAB, SubscriptionKind.TOPIC, "graph neural networks")
    app.channels.settings.set_schedule(LAB, "09:00", "UTC", "daily")
    app.channels.settings.set_threshold(LAB, "1")  # nothing can match
    now = datetime.now(UTC)
    today = local_day(now, "UTC")
    before = app.commands.handle("/papers digest preview", Context(LAB, "u1", now=now))
    assert "No new papers matched today" in before.text  # today's own digest, still to come
    runner = DigestRunner(Deliveries(app.papers, "w1"), {"console": RecordingAdapter()})
    assert asyncio.run(runner.run_channel(app.store.channels.get(LAB).id, today))
    after = app.commands.handle("/papers digest preview", Context(LAB, "u1", now=now))
    assert after.text.startswith("Today's digest: already delivered"), after.text
    assert "No new papers match yet for the next digest (" in after.text
    assert "matched today" not in after.text
