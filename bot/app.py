"""Composition root: the one place that builds settings, engines, services, clients and the scheduler."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING, TextIO

from bot.adapters.console import ConsoleAdapter
from bot.commands import Commands
from bot.config import Settings
from bot.ops import Health, Metrics, record_ingest

if TYPE_CHECKING:
    from bot.adapters.discord.client import DigestClient
    from bot.adapters.slack.app import SlackRuntime
from bot.ports import Adapter
from bot.runner import DigestRunner
from bot.scheduler import DigestScheduler
from digest.channels import ChannelService
from digest.delivery import Deliveries
from digest.ingest.pipeline import SourceConfig
from digest.models import ChannelRef
from digest.schedule import local_day
from digest.service import DigestService
from digest.store import Store

log = logging.getLogger(__name__)


@dataclass
class App:
    """The wired application; adapters and CLI commands get what they need from here."""

    settings: Settings
    database_url: str

    @cached_property
    def store(self) -> Store:
        """The store, migrated on first use."""
        return Store.open(self.database_url)

    @cached_property
    def service(self) -> DigestService:
        """Use cases over the store and the shared ranker."""
        s = self.settings
        sources = SourceConfig(
            arxiv_base_url=s.arxiv_base_url,
            arxiv_rss_url=s.arxiv_rss_url,
            openreview_base_url=s.openreview_base_url,
        )
        return DigestService(self.store, index_dir=s.resolved_index_dir(), sources=sources)

    @cached_property
    def channels(self) -> ChannelService:
        """Channel use cases."""
        # The Discord issue: server channels' settings need Manage Channels until opened up.
        return ChannelService(self.service, self.settings.default_timezone, frozenset({"discord"}))

    @cached_property
    def commands(self) -> Commands:
        """The `/papers` command core shared by every adapter."""
        return Commands(self.channels, observe=self.metrics.command)

    @cached_property
    def metrics(self) -> Metrics:
        """Prometheus metrics for this process."""
        return Metrics(self.store)

    @cached_property
    def worker(self) -> str:
        """This process's name in delivery claims."""
        return f"{socket.gethostname()}:{os.getpid()}"

    @cached_property
    def slack(self) -> SlackRuntime | None:
        """The Slack app and poster, or None when no Slack token is configured."""
        cfg = self.settings.slack()
        if not cfg.enabled:
            return None
        from bot.adapters.slack.app import build_slack  # Slack code loads only when it is used
        from bot.adapters.slack.listeners import SlackDeps

        return build_slack(cfg, self.store.engine, SlackDeps(self.commands, self.channels))

    @cached_property
    def discord(self) -> DigestClient | None:
        """The Discord client, or None when no Discord token is configured."""
        if self.settings.discord_token is None:
            return None
        from bot.adapters.discord.client import DigestClient  # loads only when it is used
        from bot.adapters.discord.commands import DiscordDeps

        return DigestClient(DiscordDeps(self.commands, self.channels))

    def adapters(self, out: TextIO | None = None) -> dict[str, Adapter]:
        """The console always; Slack and Discord when their tokens are set."""
        transcript = self.settings.resolved_index_dir().parent / "console-transcript.log"
        adapters: dict[str, Adapter] = {"console": ConsoleAdapter(out or sys.stdout, transcript)}
        if self.slack is not None:
            adapters["slack"] = self.slack.poster
        if self.discord is not None:
            adapters["discord"] = self.discord.poster
        return adapters

    def connect(self, runner: DigestRunner, scheduler: DigestScheduler) -> None:
        """Give the platform listeners the runner (digest now) and the scheduler (schedule changes)."""
        if self.slack is not None:
            deps = self.slack.deps
            deps.runner, deps.on_schedule_change = runner, scheduler.sync
        if self.discord is not None:

            async def deliver_now(ref: ChannelRef) -> str:
                channel = await asyncio.to_thread(self.channels.channel, ref)
                return await runner.run_now(ref, local_day(datetime.now(UTC), channel.timezone))

            self.discord.deps.deliver_now, self.discord.deps.on_schedule_change = (
                deliver_now,
                scheduler.sync,
            )

    def runner(self, adapters: dict[str, Adapter]) -> DigestRunner:
        """Delivery runner over the given adapters."""
        return DigestRunner(
            Deliveries(self.channels, self.worker), adapters, on_outcome=self.metrics.digest
        )

    def scheduler(self, runner: DigestRunner) -> DigestScheduler:
        """Per-channel cron jobs plus catch-up, recovery and configured ingest jobs."""
        self.service.indexes.background = True  # a running bot embeds papers lacking a vector
        return DigestScheduler(
            self.store,
            runner,
            grace=timedelta(hours=self.settings.catchup_grace_hours),
            ingest=self._scheduled_ingest if self._sources() else None,
        )

    def _sources(self) -> list[str]:
        s = self.settings
        return [f"arxiv:{q}" for q in s.arxiv_queries] + [
            f"openreview:{v}" for v in s.openreview_venues
        ]

    async def _scheduled_ingest(self) -> None:
        for source in self._sources():
            try:
                report = await asyncio.to_thread(self.service.ingest, source)
                log.info("ingest %s: %d new", source, report.added)
                self.metrics.ingested.inc(report.added)
                await asyncio.to_thread(record_ingest, self.store)
            except Exception as exc:  # noqa: BLE001 - one failing source must not stop the others
                self.metrics.ingest_errors.inc()
                log.warning("ingest %s failed: %s", source, exc)

    def health(self, scheduler: DigestScheduler) -> Health:
        """The /healthz checks for this deployment."""
        platforms = {}
        if self.slack is not None:
            platforms["slack"] = lambda: self.slack.connected
        if self.discord is not None:
            platforms["discord"] = self.discord.is_ready
        return Health(
            self.store, lambda: scheduler.scheduler.running, platforms, bool(self._sources())
        )

    def close(self) -> None:
        """Release database connections."""
        if "store" in self.__dict__:
            self.store.close()


def build(db_url: str | None = None, settings: Settings | None = None) -> App:
    """Build the application from the environment; ``db_url`` overrides DIGESTBOT_DATABASE_URL."""
    settings = settings or Settings()
    return App(settings=settings, database_url=db_url or settings.resolved_database_url())
