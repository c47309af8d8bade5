"""Composition root: the one place that builds settings, engines, services, clients and the scheduler."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING, TextIO

from bot.config import Settings, default_database_url, load_settings

# What each property needs is imported inside it: a CLI command that only reads channels must not
# pay for scikit-learn, APScheduler, Prometheus or the chat SDKs.
if TYPE_CHECKING:
    from bot.adapters.discord.client import DigestClient
    from bot.adapters.slack.app import SlackRuntime
    from bot.commands import Commands
    from bot.ops import Health, Metrics
    from bot.ports import Adapter
    from bot.runner import DigestRunner
    from bot.scheduler import DigestScheduler
    from digest.channels import ChannelService
    from digest.models import ChannelRef
    from digest.service import DigestService
    from digest.store import Store

log = logging.getLogger(__name__)


@dataclass
class App:
    """The wired application; adapters and CLI commands get what they need from here."""

    settings: Settings
    database_url: str
    failed: dict[str, str] = field(default_factory=dict)  # platform -> why it could not log in
    # A one-shot CLI command stops on an embedding model it cannot have; a running bot logs it
    # and ranks lexically.
    strict_model: bool = False

    @cached_property
    def store(self) -> Store:
        """The store, migrated on first use."""
        from digest.store import Store

        # Only the default data directory is ours to create; a typed URL's folder must exist.
        return Store.open(
            self.database_url, create_folder=self.database_url == default_database_url()
        )

    @cached_property
    def service(self) -> DigestService:
        """Use cases over the store and the shared ranker."""
        from digest.ingest.pipeline import SourceConfig
        from digest.service import DigestService

        s = self.settings
        sources = SourceConfig(
            arxiv_base_url=s.arxiv_base_url,
            arxiv_rss_url=s.arxiv_rss_url,
            openreview_base_url=s.openreview_base_url,
        )
        from digest.embeddings import ModelConfig

        model = ModelConfig(s.semantic, s.embedding_path, s.embedding_model)
        return DigestService(
            self.store, s.resolved_index_dir(), sources, model=model, strict_model=self.strict_model
        )

    @cached_property
    def channels(self) -> ChannelService:
        """Channel use cases."""
        from digest.channels import ChannelService

        # The Discord issue: server channels' settings need Manage Channels until opened up.
        grace = timedelta(hours=self.settings.catchup_grace_hours)
        return ChannelService(
            self.service, self.settings.default_timezone, frozenset({"discord"}), grace
        )

    @cached_property
    def commands(self) -> Commands:
        """The `/papers` command core shared by every adapter."""
        from bot.commands import Commands

        return Commands(self.channels, observe=self.metrics.command)

    @cached_property
    def metrics(self) -> Metrics:
        """Prometheus metrics for this process."""
        from bot.ops import Metrics

        return Metrics(self.store)

    @cached_property
    def worker(self) -> str:
        """This process's name in delivery claims: fresh each start (host:pid repeats in containers)."""
        from digest.delivery import new_instance_id

        return new_instance_id()

    @cached_property
    def slack(self) -> SlackRuntime | None:
        """The Slack app and poster, or None when no Slack token is configured."""
        cfg = self.settings.slack()
        cfg.check()  # half-configured Slack stops the start with one clear error
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

        s = self.settings
        return DigestClient(
            DiscordDeps(self.commands, self.channels),
            shard_ids=s.discord_shard_ids,
            shard_count=s.discord_shard_count,
        )

    def adapters(self, out: TextIO | None = None) -> dict[str, Adapter]:
        """The console always; Slack and Discord when their tokens are set."""
        from bot.adapters.console import ConsoleAdapter

        # One transcript per database: channel ids repeat across databases (and survive import),
        # so a digest key printed for one database must not count as posted for another.
        folder = self.settings.resolved_index_dir().parent
        transcript = folder / f"console-transcript-{self.store.identity()}.log"
        adapters: dict[str, Adapter] = {"console": ConsoleAdapter(out, transcript)}
        if self.slack is not None:
            adapters["slack"] = self.slack.poster
        if self.discord is not None:
            adapters["discord"] = self.discord.poster
        return adapters

    def connect(self, runner: DigestRunner, scheduler: DigestScheduler) -> None:
        """Give the platform listeners the runner (digest now) and the scheduler (schedule changes)."""
        if self.slack is not None:
            deps = self.slack.deps
            deps.runner, deps.on_schedule_change = runner, scheduler.poke
        if self.discord is not None:
            from digest.schedule import local_day

            async def deliver_now(ref: ChannelRef) -> str:
                channel = await asyncio.to_thread(self.channels.channel, ref)
                return await runner.run_now(ref, local_day(datetime.now(UTC), channel.timezone))

            self.discord.deps.deliver_now, self.discord.deps.on_schedule_change = (
                deliver_now,
                scheduler.poke,
            )

    def runner(self, adapters: dict[str, Adapter]) -> DigestRunner:
        """Delivery runner over the given adapters."""
        from bot.runner import DigestRunner
        from digest.delivery import Deliveries

        s = self.settings
        deliveries = Deliveries(
            self.channels,
            self.worker,
            lease=timedelta(seconds=s.delivery_lease_seconds),
            grace=timedelta(hours=s.catchup_grace_hours),
            backoff=tuple(s.delivery_backoff_seconds),
        )
        return DigestRunner(deliveries, adapters, on_outcome=self.metrics.digest)

    def scheduler(self, runner: DigestRunner) -> DigestScheduler:
        """The due timer and sweep (catch-up, recovery) plus configured ingest jobs."""
        from bot.scheduler import DigestScheduler

        self.service.indexes.background = True  # a running bot embeds papers lacking a vector
        return DigestScheduler(
            runner,
            grace=timedelta(hours=self.settings.catchup_grace_hours),
            sweep_every=timedelta(seconds=self.settings.delivery_sweep_seconds),
            ingest=self._scheduled_ingest if self._sources() else None,
            shards=self.settings.discord_shards(),
        )

    def _sources(self) -> list[str]:
        s = self.settings
        return [f"arxiv:{q}" for q in s.arxiv_queries] + [
            f"openreview:{v}" for v in s.openreview_venues
        ]

    async def _scheduled_ingest(self) -> None:
        from bot.ops import record_ingest

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
        from bot.ops import Health

        platforms = {}
        if self.slack is not None:
            platforms["slack"] = lambda: self.slack.connected
        if self.discord is not None:
            platforms["discord"] = self.discord.is_ready
        return Health(
            self.store,
            lambda: scheduler.scheduler.running,
            platforms,
            bool(self._sources()),
            failed=self.failed,
        )

    def close(self) -> None:
        """Release database connections."""
        if "store" in self.__dict__:
            self.store.close()


class _StartupNoise(logging.Filter):
    """Drops third-party start-up warnings that ask nothing of the user (voice support, a token
    Bolt ignores because we hand it a client); everything else from those loggers still shows."""

    NOISE = ("voice will NOT be supported", "`token` will be unused")

    def filter(self, record: logging.LogRecord) -> bool:
        return not any(n in record.getMessage() for n in self.NOISE)


def quiet_third_party() -> None:
    """Install the start-up noise filter on discord.py's and Bolt's loggers (idempotent)."""
    for name in ("discord.client", "slack_bolt.App", "slack_bolt.AsyncApp"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _StartupNoise) for f in logger.filters):
            logger.addFilter(_StartupNoise())


def build(db_url: str | None = None, settings: Settings | None = None) -> App:
    """Build the application from the environment; ``db_url`` overrides DIGESTBOT_DATABASE_URL."""
    quiet_third_party()
    settings = settings or load_settings()
    return App(settings=settings, database_url=db_url or settings.resolved_database_url())
