"""/healthz and /metrics."""

import asyncio
from datetime import date

import httpx
import pytest
from aiohttp import web
from sqlalchemy import create_engine

from bot.commands import Context
from bot.runtime.ops import Health, ops_app
from digest.models import ChannelRef, SubscriptionKind
from digest.papers.service import PaperService
from digest.store import Store
from tests.fakes.recording import RecordingAdapter

pytestmark = pytest.mark.asyncio


async def serve(app: web.Application):
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"


async def test_metrics_count_digests_commands_and_paused_channels(app):
    ref = ChannelRef("console", "lab")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    runner = app.runner_over({"console": RecordingAdapter()})
    ch = app.store.channels.get(ref)
    await runner.run_channel(ch.id, date(2026, 12, 1))
    await runner.run_channel(ch.id, date(2026, 12, 1))
    app.commands.handle("help", Context(ref=ref, user="u"))
    app.channels.settings.set_paused(ChannelRef("console", "other"), True, "test")
    server, base = await serve(ops_app(Health(app.papers), app.metrics))
    async with httpx.AsyncClient() as client:
        text = (await client.get(f"{base}/metrics")).text
    await server.cleanup()
    assert 'digestbot_digests_total{outcome="posted",platform="console"} 1.0' in text
    assert 'digestbot_digests_total{outcome="settled",platform="console"} 1.0' in text  # 2nd run
    assert 'digestbot_command_seconds_count{platform="console"} 1.0' in text
    assert "digestbot_paused_channels 1.0" in text


async def test_healthz_is_503_when_the_database_or_scheduler_or_a_platform_is_down(app, tmp_path):
    app.papers.record_ingest()
    checks = [
        (Health(app.papers), 200),
        (Health(app.papers, scheduler_running=lambda: False), 503),
        (Health(app.papers, platforms={"slack": lambda: False}), 503),
        (
            Health(PaperService(Store.open(f"sqlite:///{tmp_path / 'x.db'}", migrate=False))),
            200,
        ),  # empty but reachable
    ]
    broken = Store(create_engine("sqlite:////nonexistent/dir/db.sqlite"))  # cannot be opened
    checks.append((Health(PaperService(broken)), 503))
    async with httpx.AsyncClient() as client:
        for health, status in checks:
            server, base = await serve(ops_app(health, app.metrics))
            resp = await client.get(f"{base}/healthz")
            await server.cleanup()
            assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["ok"] is False and body["checks"]["database"]["ok"] is False


async def test_stale_ingest_is_unhealthy_only_when_sources_are_configured(app):
    app.store.kv.set("ops.last_ingest_at", "2020-01-01T00:00:00+00:00")
    ok, checks = await Health(app.papers, ingest_configured=False).report()
    assert ok and checks["ingest"]["age_hours"] > 1000
    ok, _ = await Health(app.papers, ingest_configured=True).report()
    assert not ok
    await asyncio.sleep(0)


async def test_ingest_age_is_read_on_the_services_clock(app):
    """The age /healthz reports comes from the one clock (digest/clock/__init__.py), not the host's.
    Breaks that turn this red: PaperService.record_ingest or ingest_age_hours reading
    datetime.now() instead of self.clock (the clock here runs 30 hours ahead of the host)."""
    from datetime import UTC, datetime, timedelta

    from tests.fakes.recording import FixedClock

    clock = FixedClock(datetime(2026, 12, 1, 9, 0, tzinfo=UTC))
    service = PaperService(app.store, clock=clock)
    service.record_ingest()
    clock.now += timedelta(hours=30)
    ok, checks = await Health(service, ingest_configured=True).report()
    assert not ok and checks["ingest"]["age_hours"] == 30.0
    clock.now -= timedelta(hours=29)
    ok, checks = await Health(service, ingest_configured=True).report()
    assert ok and checks["ingest"]["age_hours"] == 1.0


def test_digest_metric_labels_come_from_the_kind_not_the_words():
    """Labels are the typed kind of an outcome, so rewording what people read cannot move a
    count to another series. Breaks that turn this red: Metrics.digest() deriving the label from
    the text again (e.g. its first word: "sent", "delivered", "retrying", "gave")."""
    from bot.runtime.ops import Metrics
    from bot.runtime.outcome import Kind, Outcome

    metrics = Metrics()
    said = [
        ("posted 5 papers", Kind.POSTED),
        ("sent 5 papers", Kind.POSTED),
        ("already delivered", Kind.SETTLED),
        ("delivered earlier (09:00)", Kind.SETTLED),
        ("retrying at 10:00 UTC after x", Kind.RETRYING),
        ("gave up: x", Kind.FAILED),
        ("paused by Ann", Kind.NOT_SENT),
        ("taken over by another worker", Kind.LOST),
    ]
    for text, kind in said:
        metrics.digest("slack", Outcome(text, kind))
    counts = {
        s.labels["outcome"]: s.value
        for m in metrics.registry.collect()
        for s in m.samples
        if s.name == "digestbot_digests_total"
    }
    assert counts == {
        "posted": 2.0,
        "settled": 2.0,
        "retrying": 1.0,
        "failed": 1.0,
        "not_sent": 1.0,
        "lost": 1.0,
    }
