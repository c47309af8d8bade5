"""The SQL store: one facade over the paper, channel and delivery repositories."""

from __future__ import annotations

from uuid import uuid4

from sqlalchemy import Engine

from digest.store.channels import ChannelRepo
from digest.store.deliveries import DeliveryRepo
from digest.store.engine import make_engine, upgrade
from digest.store.kv import KeyValueRepo
from digest.store.ledger import LedgerRepo
from digest.store.papers import PaperRepo, UpsertCounts

__all__ = ["Store", "UpsertCounts"]


class Store:
    """Everything persistent, reached through one engine (SQLite or PostgreSQL by URL)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.papers = PaperRepo(engine)
        self.channels = ChannelRepo(engine)
        self.deliveries = DeliveryRepo(engine)
        self.ledger = LedgerRepo(engine, self.deliveries)
        self.kv = KeyValueRepo(engine)

    @classmethod
    def open(cls, url: str, migrate: bool = True, create_folder: bool = False) -> Store:
        """Connect to ``url`` and bring its schema up to date (``create_folder``: a SQLite
        file's missing folder is made, as for the default data directory)."""
        engine = make_engine(url, create_folder)
        if migrate:
            upgrade(engine)
        return cls(engine)

    def identity(self) -> str:
        """This database's own random id, made on first use and kept in it (never exported):
        channel ids repeat across databases, so what a platform saw must be keyed by both."""
        return self.kv.get_or_create("installation_id", lambda: uuid4().hex)

    def close(self) -> None:
        """Release pooled connections."""
        self.engine.dispose()
