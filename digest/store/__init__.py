"""The SQL store: one facade over the paper, channel and delivery repositories."""

from __future__ import annotations

import hashlib
import os
from functools import cached_property
from typing import TYPE_CHECKING
from uuid import uuid4

from sqlalchemy import Engine, text

from digest.clock import Clock, system_clock
from digest.store.database import make_engine, sqlite_file, upgrade

# Each repository's module loads with its first use: `digestbot channels` reads channels and
# deliveries, and must not pay for the paper, batch or weekly repositories.
if TYPE_CHECKING:
    from digest.store.batch import BatchRepo
    from digest.store.channels import ChannelRepo
    from digest.store.deliveries import DeliveryRepo
    from digest.store.embeddings import EmbeddingRepo
    from digest.store.index_parts import IndexPartRepo
    from digest.store.kv import KeyValueRepo
    from digest.store.leases import LeaseRepo
    from digest.store.ledger import LedgerRepo
    from digest.store.mentions import MentionRepo
    from digest.store.papers import PaperRepo
    from digest.store.reading import ReadingRepo
    from digest.store.weekly import WeeklyRepo
    from digest.store.zotero import ZoteroRepo

__all__ = ["Store"]  # UpsertCounts: from digest.store.papers, where it lives


class Store:
    """Everything persistent, reached through one engine (SQLite or PostgreSQL by URL); each
    repository is made on first use."""

    def __init__(self, engine: Engine, clock: Clock = system_clock) -> None:
        self.engine = engine
        self.clock = clock
        #: Papers carry their stored abstractive TL;DR (False: the extractive line only).
        self.tldr_stored = True

    @cached_property
    def papers(self) -> PaperRepo:
        """Papers, their keys and TL;DRs."""
        from digest.store.papers import PaperRepo

        papers = PaperRepo(self.engine, self.clock)
        papers.tldr_stored = self.tldr_stored
        return papers

    @cached_property
    def channels(self) -> ChannelRepo:
        """Channels, subscriptions and feedback."""
        from digest.store.channels import ChannelRepo

        return ChannelRepo(self.engine, self.clock)

    @cached_property
    def deliveries(self) -> DeliveryRepo:
        """Deliveries (digests and weekly pictures): claims, leases and their items."""
        from digest.store.deliveries import DeliveryRepo

        return DeliveryRepo(self.engine)

    @cached_property
    def embeddings(self) -> EmbeddingRepo:
        """Paper embeddings: claimed, computed once, read by every process."""
        from digest.store.embeddings import EmbeddingRepo

        return EmbeddingRepo(self.engine)

    @cached_property
    def index_parts(self) -> IndexPartRepo:
        """The fitted ranking index, as bases and segments, and the claims on making them."""
        from digest.store.index_parts import IndexPartRepo

        return IndexPartRepo(self.engine)

    @cached_property
    def ledger(self) -> LedgerRepo:
        """A delivery's messages, as planned, sent and confirmed."""
        from digest.store.ledger import LedgerRepo

        return LedgerRepo(self.engine, self.deliveries)

    @cached_property
    def kv(self) -> KeyValueRepo:
        """Values the bot keeps for itself."""
        from digest.store.kv import KeyValueRepo

        return KeyValueRepo(self.engine)

    @cached_property
    def weekly(self) -> WeeklyRepo:
        """What weekly pictures are drawn from, and who owes one."""
        from digest.store.weekly import WeeklyRepo

        return WeeklyRepo(self.engine)

    @cached_property
    def zotero(self) -> ZoteroRepo:
        """People's Zotero connections and the item keys they know."""
        from digest.store.zotero import ZoteroRepo

        return ZoteroRepo(self.engine, self.clock)

    @cached_property
    def reading(self) -> ReadingRepo:
        """Reading groups: meetings, nominations, polls and votes."""
        from digest.store.reading import ReadingRepo

        return ReadingRepo(self.engine, self.clock)

    @cached_property
    def mentions(self) -> MentionRepo:
        """Members opted in to be mentioned on a channel's picks, and their profiles in bulk."""
        from digest.store.mentions import MentionRepo

        return MentionRepo(self.engine, self.clock)

    @cached_property
    def batch(self) -> BatchRepo:
        """A scheduler tick's bulk reads and claims."""
        from digest.store.batch import BatchRepo

        return BatchRepo(self.engine)

    @cached_property
    def leases(self) -> LeaseRepo:
        """Replicas' presence and shard ownership, leased in the database's clock."""
        from digest.store.leases import LeaseRepo

        return LeaseRepo(self.engine)

    @classmethod
    def open(
        cls,
        url: str,
        migrate: bool = True,
        create_folder: bool = False,
        clock: Clock = system_clock,
    ) -> Store:
        """Connect to ``url`` and bring its schema up to date (``create_folder``: a SQLite
        file's missing folder is made, as for the default data directory)."""
        engine = make_engine(url, create_folder)
        if migrate:
            upgrade(engine)
        return cls(engine, clock)

    def ping(self) -> None:
        """One round trip to the database (raises when it cannot be reached)."""
        with self.engine.connect() as conn:
            conn.execute(text("SELECT 1"))

    def identity(self) -> str:
        """This database's own random id, made on first use and kept in it (never exported):
        channel ids repeat across databases, so what a platform saw must be keyed by both.

        A copied SQLite file carries the id too, so the id is tied to the file it was made in
        (its path and inode): a copy gets its own, while the same file reopened, or moved
        (same inode) or restored over itself (same path), keeps it."""
        ident = self.kv.get_or_create("installation_id", lambda: uuid4().hex)
        here = _file_mark(self.engine)
        if here is None:
            return ident
        mark = self.kv.get("installation_file")
        if mark is not None and not set(mark.split("\n")) & set(here.split("\n")):
            # A copy. Derived, not random: processes opening the copy together agree on it.
            ident = hashlib.sha256(f"{ident}\n{here}".encode()).hexdigest()[:32]
            self.kv.set("installation_id", ident)
        if mark != here:
            self.kv.set("installation_file", here)
        return ident

    def close(self) -> None:
        """Release pooled connections."""
        self.engine.dispose()


def _file_mark(engine: Engine) -> str | None:
    """A SQLite file's path and device:inode, one a line (None for PostgreSQL, in memory)."""
    path = sqlite_file(engine)
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{path}\n{st.st_dev}:{st.st_ino}"
