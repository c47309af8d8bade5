"""`run` warns at start-up when /papers is registered both globally and on a server (issue 23).

People in such a server see every command twice. The warning used to come only with a global sync
(when the command tree changed); an unchanged tree logged in silently.

Breaks that turn this red (each tried): setup_hook not checking after an unchanged tree (no
warning); the check ignoring the recorded server copies (duplicate_warning returning None).
"""

from __future__ import annotations

import json
import logging

import discord
import pytest

from bot.adapters.deps import Deps
from bot.adapters.discord import sync
from bot.adapters.discord.client import DigestClient
from tests.fakes.discord import FakeDiscord


async def _login(app, monkeypatch, copies: dict[str, str]) -> None:
    with FakeDiscord() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.base)
        client = DigestClient(Deps(app.commands, app.channels))  # as `run` builds it
        kv = app.store.kv
        kv.set(sync.TREE_KEY, client.tree_hash())  # synced before, unchanged since
        kv.set(sync.GUILDS_KEY, json.dumps(copies))
        await client.login("token")
        await client.close()
        assert fake.synced == {}  # nothing re-synced: the tree had not changed


@pytest.mark.asyncio
async def test_login_warns_about_a_server_copy(app, monkeypatch, caplog):
    """One warning naming the server and the exact command that removes its copy."""
    with caplog.at_level(logging.WARNING, logger="bot.adapters.discord.client"):
        await _login(app, monkeypatch, {"77": "h"})
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1
    assert "twice" in warned[0] and "digestbot discord sync --guild 77 --remove" in warned[0]


@pytest.mark.asyncio
async def test_no_server_copy_no_warning(app, monkeypatch, caplog):
    with caplog.at_level(logging.WARNING, logger="bot.adapters.discord.client"):
        await _login(app, monkeypatch, {})
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
