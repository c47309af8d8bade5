"""People's Zotero connections (the API key only as a Fernet token) and the items sync and
`/papers save` know by key."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from digest.clock import Clock, system_clock
from digest.store.schema import ZoteroConnectionRow, ZoteroItemRow

SYNCED, SAVED = "synced", "saved"


@dataclass(frozen=True)
class Connection:
    """One person's library as stored; ``key_encrypted`` is never the key itself."""

    id: int
    platform: str
    workspace: str
    user_id: str
    channel_id: str
    library_type: str
    library_id: str
    key_encrypted: str
    collection_key: str | None
    version: int
    synced_at: datetime | None
    backoff_until: datetime | None

    def __repr__(self) -> str:  # a token is not the key, but it need not be printed either
        return f"Connection({self.platform}:{self.workspace}/{self.user_id} -> {self.library_type}s/{self.library_id})"


def _utc(value: datetime | None) -> datetime | None:
    """SQLite hands back naive times; every one stored here is UTC."""
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


def _connection(row: ZoteroConnectionRow) -> Connection:
    return Connection(
        row.id,
        row.platform,
        row.workspace,
        row.user_id,
        row.channel_id,
        row.library_type,
        row.library_id,
        row.key_encrypted,
        row.collection_key,
        row.version,
        _utc(row.synced_at),
        _utc(row.backoff_until),
    )


class ZoteroRepo:
    """Connections by person, and the item keys each connection has seen or made."""

    def __init__(self, engine: Engine, clock: Clock = system_clock) -> None:
        self.engine = engine
        self.clock = clock

    def get(self, platform: str, workspace: str, user_id: str) -> Connection | None:
        stmt = select(ZoteroConnectionRow).where(
            ZoteroConnectionRow.platform == platform,
            ZoteroConnectionRow.workspace == workspace,
            ZoteroConnectionRow.user_id == user_id,
        )
        with Session(self.engine) as session:
            row = session.scalars(stmt).first()
            return _connection(row) if row else None

    def by_id(self, connection_id: int) -> Connection | None:
        with Session(self.engine) as session:
            row = session.get(ZoteroConnectionRow, connection_id)
            return _connection(row) if row else None

    def connect(
        self,
        platform: str,
        workspace: str,
        user_id: str,
        channel_id: str,
        library_type: str,
        library_id: str,
        key_encrypted: str,
    ) -> Connection:
        """Store (or replace) a person's connection; a new library starts sync from scratch."""
        old = self.get(platform, workspace, user_id)
        if old is not None:
            self.disconnect(platform, workspace, user_id)
        with Session(self.engine) as session:
            row = ZoteroConnectionRow(
                platform=platform,
                workspace=workspace,
                user_id=user_id,
                channel_id=channel_id,
                library_type=library_type,
                library_id=library_id,
                key_encrypted=key_encrypted,
                version=0,
                created_at=self.clock(),
            )
            session.add(row)
            try:
                session.commit()
            except IntegrityError:  # connected twice at once: the other one stands
                session.rollback()
                again = self.get(platform, workspace, user_id)
                assert again is not None
                return again
            return _connection(row)

    def disconnect(self, platform: str, workspace: str, user_id: str) -> bool:
        """Delete the connection, its encrypted key and the item keys with it."""
        old = self.get(platform, workspace, user_id)
        if old is None:
            return False
        with Session(self.engine) as session:
            session.execute(delete(ZoteroItemRow).where(ZoteroItemRow.connection_id == old.id))
            session.execute(delete(ZoteroConnectionRow).where(ZoteroConnectionRow.id == old.id))
            session.commit()
        return True

    def all(self) -> list[Connection]:
        with Session(self.engine) as session:
            rows = session.scalars(select(ZoteroConnectionRow).order_by(ZoteroConnectionRow.id))
            return [_connection(r) for r in rows]

    def set(self, connection_id: int, **values: object) -> None:
        """Update sync state: version, synced_at, backoff_until, collection_key."""
        allowed = {"version", "synced_at", "backoff_until", "collection_key"}
        assert set(values) <= allowed, set(values) - allowed
        stmt = (
            update(ZoteroConnectionRow)
            .where(ZoteroConnectionRow.id == connection_id)
            .values(**values)
        )
        with Session(self.engine) as session:
            session.execute(stmt)
            session.commit()

    def items(self, connection_id: int, kind: str) -> dict[str, tuple[str | None, bool]]:
        """item key -> (paper id, whether sync added its like)."""
        stmt = select(ZoteroItemRow).where(
            ZoteroItemRow.connection_id == connection_id, ZoteroItemRow.kind == kind
        )
        with Session(self.engine) as session:
            return {r.item_key: (r.paper_id, r.added_like) for r in session.scalars(stmt)}

    def put_item(
        self, connection_id: int, kind: str, item_key: str, paper_id: str | None, added: bool
    ) -> None:
        """Remember an item (again): a re-read keeps the like sync added before."""
        with Session(self.engine) as session:
            row = session.scalars(
                select(ZoteroItemRow).where(
                    ZoteroItemRow.connection_id == connection_id,
                    ZoteroItemRow.item_key == item_key,
                    ZoteroItemRow.kind == kind,
                )
            ).first()
            if row is None:
                session.add(
                    ZoteroItemRow(
                        connection_id=connection_id,
                        item_key=item_key,
                        kind=kind,
                        paper_id=paper_id,
                        added_like=added,
                    )
                )
            else:
                row.added_like = row.added_like or added
                row.paper_id = paper_id
            session.commit()

    def drop_items(self, connection_id: int, kind: str, keys: list[str]) -> None:
        with Session(self.engine) as session:
            session.execute(
                delete(ZoteroItemRow).where(
                    ZoteroItemRow.connection_id == connection_id,
                    ZoteroItemRow.kind == kind,
                    ZoteroItemRow.item_key.in_(keys),
                )
            )
            session.commit()

    def saved_key(self, connection_id: int, paper_id: str) -> str | None:
        """The item `/papers save` made for this paper in this library, if any."""
        stmt = select(ZoteroItemRow.item_key).where(
            ZoteroItemRow.connection_id == connection_id,
            ZoteroItemRow.kind == SAVED,
            ZoteroItemRow.paper_id == paper_id,
        )
        with Session(self.engine) as session:
            return session.scalars(stmt).first()
