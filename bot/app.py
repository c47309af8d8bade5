"""Composition root: the one place that builds settings, engines, services, clients and the scheduler."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from digest.service import DigestService

from bot.config import Settings
from digest.ingest.pipeline import SourceConfig
from digest.store import Store


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

    def close(self) -> None:
        """Release database connections."""
        if "store" in self.__dict__:
            self.store.close()


def build(db_url: str | None = None, settings: Settings | None = None) -> App:
    """Build the application from the environment; ``db_url`` overrides DIGESTBOT_DATABASE_URL."""
    settings = settings or Settings()
    return App(settings=settings, database_url=db_url or settings.resolved_database_url())
