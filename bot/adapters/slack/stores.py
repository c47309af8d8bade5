"""slack_sdk's SQLAlchemy installation and OAuth-state stores on the project's own engine, for async Bolt.

The async variants in slack_sdk need an async engine (another driver per database); these wrap the
sync stores, whose tables the project's migrations create, and run them in a worker thread.
"""

from __future__ import annotations

import asyncio
from logging import Logger

from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore
from sqlalchemy import Engine


class InstallationStore(AsyncInstallationStore):
    """Workspace installations (bot tokens) in the project's database."""

    def __init__(self, client_id: str, engine: Engine) -> None:
        self.sync = SQLAlchemyInstallationStore(client_id=client_id, engine=engine)

    @property
    def logger(self) -> Logger:
        return self.sync.logger

    async def async_save(self, installation: Installation) -> None:
        await asyncio.to_thread(self.sync.save, installation)

    async def async_save_bot(self, bot: Bot) -> None:
        await asyncio.to_thread(self.sync.save_bot, bot)

    async def async_find_bot(self, **kwargs) -> Bot | None:
        return await asyncio.to_thread(lambda: self.sync.find_bot(**kwargs))

    async def async_find_installation(self, **kwargs) -> Installation | None:
        return await asyncio.to_thread(lambda: self.sync.find_installation(**kwargs))

    async def async_delete_bot(self, **kwargs) -> None:
        await asyncio.to_thread(lambda: self.sync.delete_bot(**kwargs))

    async def async_delete_installation(self, **kwargs) -> None:
        await asyncio.to_thread(lambda: self.sync.delete_installation(**kwargs))

    async def async_delete_all(self, **kwargs) -> None:
        await asyncio.to_thread(lambda: self.sync.delete_all(**kwargs))


class StateStore(AsyncOAuthStateStore):
    """OAuth `state` values (CSRF protection of the install flow) in the project's database."""

    def __init__(self, engine: Engine, expiration_seconds: int = 600) -> None:
        self.sync = SQLAlchemyOAuthStateStore(expiration_seconds=expiration_seconds, engine=engine)

    @property
    def logger(self) -> Logger:
        return self.sync.logger

    async def async_issue(self, *args, **kwargs) -> str:
        return await asyncio.to_thread(self.sync.issue)

    async def async_consume(self, state: str) -> bool:
        return await asyncio.to_thread(self.sync.consume, state)
