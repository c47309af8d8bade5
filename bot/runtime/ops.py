"""Operations endpoints: Prometheus metrics and a health check, served next to the bot."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

if TYPE_CHECKING:  # the web server loads with `run`: a CLI command counts metrics only
    from aiohttp import web

    from bot.runtime.outcome import Outcome
    from digest.papers.service import PaperService

log = logging.getLogger(__name__)


class Metrics:
    """The bot's Prometheus metrics, in their own registry (several bots per process in tests)."""

    def __init__(self, paused: Callable[[], int] | None = None) -> None:
        self.registry = CollectorRegistry()
        self.digests = Counter(
            "digestbot_digests",
            "Digests by platform and outcome",
            ["platform", "outcome"],
            registry=self.registry,
        )
        self.commands = Histogram(
            "digestbot_command_seconds",
            "Time to answer a /papers command",
            ["platform"],
            registry=self.registry,
        )
        self.ingested = Counter(
            "digestbot_ingested_papers", "Papers added by ingest", registry=self.registry
        )
        self.ingest_errors = Counter(
            "digestbot_ingest_errors", "Failed ingests", registry=self.registry
        )
        self.paused = Gauge(
            "digestbot_paused_channels",
            "Channels paused (by users or by errors)",
            registry=self.registry,
        )
        if paused is not None:  # counted from the database at scrape time, so every process agrees
            self.paused.set_function(paused)

    def digest(self, platform: str, outcome: Outcome) -> None:
        """Count a run's outcome by its typed kind (posted, settled, not_sent, busy, lost,
        retrying, failed): rewording the text people read never changes a label."""
        self.digests.labels(platform, outcome.kind.name.lower()).inc()

    def command(self, platform: str, seconds: float) -> None:
        """Record how long a command took."""
        self.commands.labels(platform).observe(seconds)


@dataclass
class Health:
    """What /healthz looks at; each check returns (ok, detail)."""

    service: PaperService
    scheduler_running: Callable[[], bool] = lambda: True
    platforms: dict[str, Callable[[], bool]] = field(default_factory=dict)
    ingest_configured: bool = False
    max_ingest_age_hours: float = 24.0
    failed: dict[str, str] = field(default_factory=dict)  # platform -> why its login failed

    async def report(self) -> tuple[bool, dict]:
        """Overall health and the detail behind it."""
        checks: dict[str, dict] = {}
        try:
            await asyncio.to_thread(self._ping)
            checks["database"] = {"ok": True}
        except Exception as exc:  # noqa: BLE001 - any failure to reach the database is "unhealthy"
            checks["database"] = {"ok": False, "error": type(exc).__name__}
        checks["scheduler"] = {"ok": bool(self.scheduler_running())}
        for name, connected in self.platforms.items():
            checks[name] = {"ok": bool(connected())}
            if name in self.failed:
                checks[name] = {"ok": False, "error": f"login failed: {self.failed[name]}"}
        checks["ingest"] = await asyncio.to_thread(self._ingest)
        return all(c["ok"] for c in checks.values()), checks

    def _ping(self) -> None:
        self.service.ping()

    def _ingest(self) -> dict:
        try:
            age = self.service.ingest_age_hours()
        except Exception:  # noqa: BLE001 - reported by the database check
            return {"ok": True, "age_hours": None}
        if age is None:
            return {"ok": not self.ingest_configured, "age_hours": None}
        return {
            "ok": not self.ingest_configured or age <= self.max_ingest_age_hours,
            "age_hours": round(age, 2),
        }


def ops_app(health: Health, metrics: Metrics) -> web.Application:
    """GET /healthz (200 or 503, JSON) and GET /metrics (Prometheus text format)."""
    from aiohttp import web

    async def healthz(_: web.Request) -> web.Response:
        ok, checks = await health.report()
        return web.json_response({"ok": ok, "checks": checks}, status=200 if ok else 503)

    async def prometheus(_: web.Request) -> web.Response:
        body = await asyncio.to_thread(generate_latest, metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application()
    app.add_routes([web.get("/healthz", healthz), web.get("/metrics", prometheus)])
    return app


class Timer:
    """Measures a block: ``with Timer() as t: ...; t.seconds``."""

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start
