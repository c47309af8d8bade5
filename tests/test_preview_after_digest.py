"""A preview after today's digest went out is the next digest, labelled and announced as such."""

import asyncio
import json
import re
from datetime import UTC, datetime, timedelta

from bot.commands import Context
from bot.runner import DigestRunner
from digest.delivery import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from digest.schedule import local_day
from tests.cli_proc import digestbot
from tests.fakes import RecordingAdapter

LAB = ChannelRef("console", "lab")


def test_chat_preview_after_todays_digest_names_the_next_one(app):
    """Breaks that turn this red: `digest preview` composing for today whatever was sent (the
    reviewer's "📚 Papers for Mon 30 Nov" holding other papers than the posted digest), or
    leaving out the note that today's digest already went out."""
    app.channels.add(LAB, SubscriptionKind.TOPIC, "graph neural networks")
    app.channels.set_schedule(LAB, "09:00", "UTC", "daily")
    now = datetime.now(UTC)
    today = local_day(now, "UTC")
    before = app.commands.handle("/papers digest preview", Context(LAB, "u1", now=now))
    assert before.title == f"📚 Papers for {today:%a %d %b %Y}" and "Today's" not in before.text
    runner = DigestRunner(Deliveries(app.channels, "w1"), {"console": RecordingAdapter()})
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


def test_cli_dry_run_after_todays_digest_names_the_next_one(tmp_path):
    """Break that turns this red: `digest --dry-run` previewing under today's date after today's
    digest was posted."""
    corpus = tmp_path / "papers.jsonl"
    rows = [{"id": f"p{i}", "title": f"Sparse autoencoders {i}", "abstract": "Sparse features."}
            for i in range(12)]  # fmt: skip
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert digestbot(tmp_path, "ingest", str(corpus)).returncode == 0
    assert digestbot(tmp_path, "cmd", "console:lab", "/papers subscribe sparse").returncode == 0
    digestbot(tmp_path, "cmd", "console:lab", "/papers schedule 00:00 UTC daily")
    posted = digestbot(tmp_path, "digest", "console:lab")
    assert posted.returncode == 0 and "posted" in posted.stdout, posted.stdout + posted.stderr
    preview = digestbot(tmp_path, "digest", "console:lab", "--dry-run", "--json")
    out = json.loads(preview.stdout)
    tomorrow = local_day(datetime.now(UTC), "UTC") + timedelta(days=1)
    assert out["date"] == tomorrow.isoformat()
    assert out["outcome"].startswith("preview: Today's digest: already delivered at ")
    text = digestbot(tmp_path, "digest", "console:lab", "--dry-run").stdout
    assert (
        text.startswith("Today's digest: already delivered") and f"{tomorrow:%a %d %b %Y}" in text
    )
