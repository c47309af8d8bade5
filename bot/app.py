"""Composition root: the one place that builds settings, engines, services, clients and the scheduler."""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cached_property
from typing import TYPE_CHECKING, TextIO

from bot.config import Settings, default_database_url, load_settings
from digest.clock import Clock, system_clock

# What each property needs is imported inside it: a CLI command that only reads channels must not
# pay for scikit-learn, APScheduler, Prometheus or the chat SDKs.
if TYPE_CHECKING:
    from bot.adapters.discord.client import DigestClient
    from bot.adapters.slack.app import SlackRuntime
    from bot.commands import Commands
    from bot.ports import Adapter
    from bot.runtime.background import ProcessDrawer
    from bot.runtime.effects import EffectExecutor
    from bot.runtime.index_work import EmbeddingWorker, IndexRefresher
    from bot.runtime.leases import ReplicaLeases
    from bot.runtime.ops import Health, Metrics
    from bot.runtime.reading import ReadingSender
    from bot.runtime.runner import DigestRunner
    from bot.runtime.scheduler import DigestScheduler
    from bot.runtime.weekly import WeeklySender
    from digest.channels.service import ChannelService
    from digest.delivery.digests import Digests
    from digest.models import ChannelRef, Shards
    from digest.papers.pages import SearchPages
    from digest.papers.service import PaperService
    from digest.store import Store
    from digest.store.leases import LeaseRepo
    from digest.tldr.writer import AfterIngest
    from digest.zotero.service import ZoteroService

log = logging.getLogger(__name__)


@dataclass
class App:
    """The wired application; adapters and CLI commands get what they need from here.

    Everything is built once, on first use, from the fields given at construction: nothing is
    wired in afterwards. The one cycle (the runner posts through the platforms' clients, which
    answer through the effect executor, which posts through the runner) is broken by the executor
    reaching the runner through this root only when a reply asks for a digest now.
    """

    settings: Settings
    database_url: str
    failed: dict[str, str] = field(default_factory=dict)  # platform -> why it could not log in
    # A one-shot CLI command stops on an embedding model it cannot have; a running bot logs it
    # and ranks lexically.
    strict_model: bool = False
    #: Business time (due days, votes, ingest times) for everything built here: one clock, so a
    #: test (or a replay) moves every "now" at once. The database keeps its own for leases.
    clock: Clock = system_clock
    out: TextIO | None = None  # where the console prints digests (None: stdout as it is then)
    # Whether digests go to the console: True for one-shot commands; None decides for the running
    # bot (a service nobody can type at has none: a console digest would only fill its log).
    console: bool | None = True

    @cached_property
    def store(self) -> Store:
        """The store, migrated on first use."""
        from digest.store import Store

        # Only the default data directory is ours to create; a typed URL's folder must exist.
        create = self.database_url == default_database_url()
        store = Store.open(self.database_url, create_folder=create, clock=self.clock)
        # Papers carry their stored abstractive TL;DR, whichever model wrote it, so a process
        # without the LLM settings shows the line another one paid for (docs/tldr.md).
        # (Set on the store, not its papers: a listing must not load the paper repository.)
        store.tldr_stored = self.settings.tldr == "stored"
        return store

    @property
    def running(self) -> bool:
        """The long-running bot (`digestbot run` leaves ``console`` to be decided): its background
        work (embedding, TL;DRs, weekly pictures) runs in bot/runtime, chosen here when built."""
        return self.console is None

    @cached_property
    def papers(self) -> PaperService:
        """Use cases over the store and the shared ranker."""
        from digest.ingest import SourceConfig
        from digest.papers.service import PaperService

        s = self.settings
        sources = SourceConfig(
            arxiv_base_url=s.arxiv_base_url,
            arxiv_rss_url=s.arxiv_rss_url,
            openreview_base_url=s.openreview_base_url,
        )
        from digest.index.embeddings import ModelConfig

        model = ModelConfig(s.semantic, s.embedding_path, s.embedding_model)
        llm = s.llm()
        tldrs: AfterIngest | None = None
        if llm is not None:  # abstractive TL;DRs, written after each ingest (docs/tldr.md)
            from digest.tldr.writer import TldrWriter

            tldrs = writer = TldrWriter(self.store, llm, now=self.clock)
            if self.running:  # on a runtime thread: an ingest (a scheduled one) never waits
                from bot.runtime.background import BackgroundTldrs

                tldrs = BackgroundTldrs(writer)
        # A running bot embeds no paper itself: its embedding worker process does (``embedder``).
        return PaperService(
            self.store,
            s.resolved_index_dir(),
            sources,
            model=model,
            strict_model=self.strict_model,
            clock=self.clock,
            tldrs=tldrs,
            embeds=not self.running,
        )

    @cached_property
    def channels(self) -> ChannelService:
        """Channel use cases."""
        from digest.channels.service import ChannelService

        # The Discord issue: server channels' settings need Manage Channels until opened up.
        grace = timedelta(hours=self.settings.catchup_grace_hours)
        return ChannelService(
            self.papers,
            self.settings.default_timezone,
            frozenset({"discord"}),
            grace,
        )

    @cached_property
    def digests(self) -> Digests:
        """What channels' digests are and will be (previews, next, today, weekly pictures)."""
        from digest.delivery.digests import Digests

        return Digests(self.channels, draw=self.drawer)

    @cached_property
    def drawer(self) -> ProcessDrawer | None:
        """Where the running bot draws weekly pictures: a child process, so a Monday of
        pictures never holds the GIL its event loop answers with (bot/runtime/background.py).
        One-shot commands draw in their own process: None."""
        if not self.running:
            return None
        from bot.runtime.background import ProcessDrawer

        return ProcessDrawer()

    @cached_property
    def index_refresher(self) -> IndexRefresher:
        """Keeps the served index in step with the store, on a thread (bot/runtime/index_work.py)."""
        from bot.runtime.index_work import IndexRefresher

        return IndexRefresher(self.papers.indexes)

    @cached_property
    def embedder(self) -> EmbeddingWorker | None:
        """The running bot's embedding worker: a niced child process that claims papers lacking a
        vector (None when ranking is lexical: semantic off or the extra not installed)."""
        indexes = self.papers.indexes
        if indexes.embeddings is None:
            return None
        from bot.runtime.index_work import EmbeddingWorker

        url = self.store.engine.url.render_as_string(hide_password=False)
        return EmbeddingWorker(url, self.papers.model)

    @cached_property
    def commands(self) -> Commands:
        """The `/papers` command core shared by every adapter."""
        from bot.commands import Commands

        return Commands(
            self.channels, observe=self._observe, digests=self.digests, zotero=self.zotero
        )

    @cached_property
    def zotero(self) -> ZoteroService:
        """People's Zotero libraries; their keys sealed with DIGESTBOT_SECRET_KEY (none: refused)."""
        from bot.logs import never_log
        from digest.zotero.service import ZoteroService

        secret = self.settings.secret_key
        return ZoteroService(
            self.channels,
            secret.get_secret_value() if secret is not None else None,
            self.settings.zotero_api_url,
            clock=self.clock,
            reveal=never_log,
        )

    def _observe(self, platform: str, seconds: float) -> None:
        """Count a command's time once this process keeps metrics (a running bot builds them
        with its runner); a one-shot CLI command has no one to scrape them and must not load
        Prometheus for it."""
        if "metrics" in self.__dict__:
            self.metrics.command(platform, seconds)

    @cached_property
    def metrics(self) -> Metrics:
        """Prometheus metrics for this process."""
        from bot.runtime.ops import Metrics

        return Metrics(self.channels.paused_count)

    @cached_property
    def worker(self) -> str:
        """This process's name in delivery claims: fresh each start (host:pid repeats in containers)."""
        from digest.delivery.steps import new_instance_id

        return new_instance_id()

    @cached_property
    def pages(self) -> SearchPages:
        """Searches kept behind page buttons, one service for every platform, on the one clock."""
        from digest.papers.pages import SearchPages

        return SearchPages(self.store, self.clock)

    @cached_property
    def slack(self) -> SlackRuntime | None:
        """The Slack app and poster, or None when no Slack token is configured."""
        cfg = self.settings.slack()
        cfg.check()  # half-configured Slack stops the start with one clear error
        if not cfg.enabled:
            return None
        from bot.adapters.deps import Deps
        from bot.adapters.slack.app import build_slack  # Slack code loads only when it is used

        deps = Deps(self.commands, self.channels, self.effects, self.pages)
        return build_slack(cfg, self.store.engine, deps)

    @cached_property
    def discord(self) -> DigestClient | None:
        """The Discord client, or None when no Discord token is configured."""
        if self.settings.discord_token is None:
            return None
        from bot.adapters.deps import Deps
        from bot.adapters.discord.client import DigestClient  # loads only when it is used

        s = self.settings
        return DigestClient(
            Deps(self.commands, self.channels, self.effects, self.pages),
            shard_ids=s.discord_shard_ids,
            shard_count=s.discord_shard_count,
            leased=self.shards_leased,
        )

    @property
    def shards_leased(self) -> bool:
        """Discord's shards are leased in the database (taken over when a replica dies) unless
        the settings pin this replica's shard ids."""
        return self.settings.discord_token is not None and not self.settings.discord_shard_ids

    @property
    def shard_leases(self) -> LeaseRepo:
        """Who holds each shard, and the shard count every replica reads (`discord shards`)."""
        return self.store.leases

    @cached_property
    def leases(self) -> ReplicaLeases:
        """This replica's presence and (when leased) Discord shards, renewed while it runs."""
        from bot.runtime.leases import ReplicaLeases

        if not self.shards_leased:
            return ReplicaLeases(self.store.leases, self.worker)
        leases = ReplicaLeases(
            self.store.leases,
            self.worker,
            platform="discord",
            default_count=self.settings.discord_shard_count or 1,
        )

        async def apply(shards: Shards) -> None:
            if "scheduler" in self.__dict__:
                self.scheduler.shards = shards
            if self.discord is not None:
                await self.discord.serve(shards)

        leases.listeners.append(apply)
        return leases

    @cached_property
    def interactive(self) -> bool:
        """Whether the console takes part (see ``console``): for the running bot, when someone
        can type at it (a terminal) or no chat platform is configured."""
        if self.console is not None:
            return self.console
        return sys.stdin.isatty() or (self.slack or self.discord) is None

    @cached_property
    def adapters(self) -> dict[str, Adapter]:
        """Where digests go: the console (see ``interactive``); Slack and Discord when their
        tokens are set."""
        from bot.adapters.console import ConsoleAdapter

        adapters: dict[str, Adapter] = {}
        if self.interactive:
            # One transcript per database: channel ids repeat across databases (and survive
            # import), so a digest key printed for one must not count as posted for another.
            folder = self.settings.resolved_index_dir().parent
            transcript = folder / f"console-transcript-{self.store.identity()}.log"
            adapters["console"] = ConsoleAdapter(self.out, transcript)
        if self.slack is not None:
            adapters["slack"] = self.slack.poster
        if self.discord is not None:
            adapters["discord"] = self.discord.poster
        return adapters

    @cached_property
    def effects(self) -> EffectExecutor:
        """The one executor of a reply's effects, for every platform and the CLI."""
        from bot.runtime.effects import EffectExecutor

        return EffectExecutor(
            self.channels, deliver=self._deliver_now, poke=self._poke, now=self.clock
        )

    async def _deliver_now(self, ref: ChannelRef, day: date) -> str:
        # The runner is built here, on the first `digest now`: a one-shot command that posts
        # nothing never loads the platform clients or the metrics.
        return await self.runner.run_now(ref, day)

    def _poke(self) -> None:
        # Only a scheduler this process runs: a one-shot command's change is seen by the running
        # bot's sweep (the store marks the channel), and building a scheduler here would be waste.
        if "scheduler" in self.__dict__:
            self.scheduler.poke()

    @cached_property
    def runner(self) -> DigestRunner:
        """The delivery runner over this process's adapters."""
        return self.runner_over(self.adapters)

    def runner_over(self, adapters: dict[str, Adapter]) -> DigestRunner:
        """A delivery runner over the given adapters."""
        from bot.runtime.runner import DigestRunner
        from digest.delivery.steps import Deliveries

        s = self.settings
        deliveries = Deliveries(
            self.papers,
            self.worker,
            lease=timedelta(seconds=s.delivery_lease_seconds),
            grace=timedelta(hours=s.catchup_grace_hours),
            backoff=tuple(s.delivery_backoff_seconds),
        )
        from digest.weekly.picture import WeeklyPictures

        pictures = WeeklyPictures(self.store, draw=self.drawer).for_week
        return DigestRunner(
            deliveries,
            adapters,
            on_outcome=self.metrics.digest,
            channels=self.channels,
            pictures=pictures,
            reading=self.commands.reading.post,
        )

    @cached_property
    def scheduler(self) -> DigestScheduler:
        """The due timer and sweep (catch-up, recovery) plus configured ingest jobs."""
        from bot.runtime.scheduler import DigestScheduler

        scheduler = DigestScheduler(
            self.runner,
            grace=timedelta(hours=self.settings.catchup_grace_hours),
            clock=self.clock,
            sweep_every=timedelta(seconds=self.settings.delivery_sweep_seconds),
            ingest=self._scheduled_ingest if self._sources() else None,
            # leased: the shards held now (none before the first renewal), then each change
            shards=self.leases.shards if self.shards_leased else self.settings.discord_shards(),
            chores=(self._zotero_sync,),
        )
        # The weekly picture and the reading group's posts are jobs of their own (not part of
        # the digest tick): each starts with the scheduler and stops with it; the reading
        # group's posts each follow their own timeline (digest/reading/schedule.py).
        jobs = (
            ("weekly", self.weekly(self.runner), self.settings.weekly_sweep_seconds, 60),
            ("reading", self.reading(self.runner), self.settings.reading_sweep_seconds, 30),
        )
        for job_id, sweeper, seconds, first in jobs:
            every = timedelta(seconds=seconds)
            scheduler.scheduler.add_job(
                sweeper.sweep,
                "interval",
                seconds=every.total_seconds(),
                id=job_id,
                replace_existing=True,
                max_instances=1,
                coalesce=True,
                misfire_grace_time=None,  # late on a busy machine: it runs late, with no warning
                next_run_time=self.clock() + min(every, timedelta(seconds=first)),
            )
        return scheduler

    def reading(self, runner: DigestRunner) -> ReadingSender:
        """Claims the reading groups' posts owed; ``runner`` sends them as it sends digests."""
        from bot.runtime.reading import ReadingSender

        return ReadingSender(self.commands.reading, runner, self.clock)

    def weekly(self, runner: DigestRunner) -> WeeklySender:
        """Claims each channel's weekly picture; ``runner`` sends it as it sends digests."""
        from bot.runtime.weekly import WeeklySender
        from digest.weekly.picture import WeeklyPictures

        return WeeklySender(WeeklyPictures(self.store, draw=self.drawer), runner, self.clock)

    async def _zotero_sync(self) -> None:
        """The sweep's Zotero chore: each library a day after its last sync (cheap when none is)."""
        done = await asyncio.to_thread(self.zotero.sync_due)
        if done:
            log.info("zotero daily sync: %s", done)

    def _sources(self) -> list[str]:
        s = self.settings
        return [f"arxiv:{q}" for q in s.arxiv_queries] + [
            f"openreview:{v}" for v in s.openreview_venues
        ]

    async def _scheduled_ingest(self) -> None:
        for source in self._sources():
            try:
                report = await asyncio.to_thread(self.papers.ingest, source)
                log.info("ingest %s: %d new", source, report.added)
                self.metrics.ingested.inc(report.added)
                await asyncio.to_thread(self.papers.record_ingest)
            except Exception as exc:  # noqa: BLE001 - one failing source must not stop the others
                self.metrics.ingest_errors.inc()
                log.warning("ingest %s failed: %s", source, exc)

    def health(self) -> Health:
        """The /healthz checks for this deployment."""
        from bot.runtime.ops import Health

        platforms = {}
        if self.slack is not None:
            platforms["slack"] = lambda: self.slack.connected
        if self.discord is not None:
            platforms["discord"] = self.discord.is_ready
        return Health(
            self.papers,
            lambda: self.scheduler.scheduler.running,
            platforms,
            bool(self._sources()),
            failed=self.failed,
        )

    def upgrade(self) -> tuple[str | None, str | None, str]:
        """Migrate the database: (revision before, revision after, its URL with the password hidden)."""
        from digest.store.database import revision_of

        before = revision_of(self.database_url)
        store = self.store  # opening it migrates
        after = revision_of(self.database_url)
        return before, after, store.engine.url.render_as_string(hide_password=True)

    def close(self) -> None:
        """Release database connections and stop the drawing process."""
        if self.__dict__.get("drawer") is not None:
            self.drawer.close()
        if self.__dict__.get("embedder") is not None:
            self.embedder.close()
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


def build(
    db_url: str | None = None,
    settings: Settings | None = None,
    *,
    strict_model: bool = False,
    out: TextIO | None = None,
    console: bool | None = True,
) -> App:
    """Build the application from the environment; ``db_url`` overrides DIGESTBOT_DATABASE_URL
    (the other options: see App)."""
    quiet_third_party()
    settings = settings or load_settings()
    url = db_url or settings.resolved_database_url()
    return App(settings, url, strict_model=strict_model, out=out, console=console)
