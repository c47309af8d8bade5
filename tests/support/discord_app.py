"""INTERACTION_CREATE payloads as Discord sends them, fed to discord.py's own handler
(ConnectionState.parse_interaction_create), which parses options and routes buttons itself."""

from __future__ import annotations

import asyncio
import contextlib
import re
from datetime import date
from types import SimpleNamespace

import discord
import pytest

from bot.adapters.deps import Deps
from bot.adapters.discord.client import DigestClient
from digest.models import ChannelRef
from tests.fakes.discord import BOT, FakeDiscord, user
from tests.fakes.discord_interactions import ISSUED, issue

MANAGE_CHANNELS = 16
DAY = date(2026, 12, 1)
SERVER = ChannelRef("discord", "111", "77")  # the server channel most tests use
TYPES = {str: 3, int: 4, bool: 5, float: 10}


def _options(values: dict) -> list[dict]:
    return [
        {"type": TYPES[type(v)], "name": k, "value": v} for k, v in values.items() if v is not None
    ]


def _where(channel_id: str, guild_id: str | None, uid: str, perms: int, parent: str | None) -> dict:
    """Who and where: a server member in a channel or thread, or a user in the bot's DM."""
    if guild_id is None:
        channel = {"id": channel_id, "type": 1, "recipients": [user(uid)]}
        return {"channel_id": channel_id, "channel": channel, "user": user(uid)}
    channel = {
        "id": channel_id,
        "type": 0,
        "guild_id": guild_id,
        "name": "lab",
        "position": 0,
        "permission_overwrites": [],
        "nsfw": False,
        "parent_id": None,
    }
    if parent is not None:
        channel = {
            "id": channel_id,
            "type": 11,
            "guild_id": guild_id,
            "name": "Digest",
            "parent_id": parent,
            "owner_id": BOT["id"],
            "message_count": 1,
            "member_count": 1,
            "thread_metadata": {
                "archived": False,
                "locked": False,
                "auto_archive_duration": 1440,
                "archive_timestamp": "2026-12-01T09:00:00+00:00",
            },
        }
    member = {
        "user": user(uid),
        "roles": [],
        "joined_at": "2026-01-01T00:00:00+00:00",
        "deaf": False,
        "mute": False,
        "permissions": str(perms),
        "flags": 0,
    }
    return {"channel_id": channel_id, "channel": channel, "guild_id": guild_id, "member": member}


def _payload(kind: int, data: dict, token: str, where: dict) -> dict:
    return {
        "id": issue(kind),
        "application_id": "2000",
        "type": kind,
        "token": token,
        "version": 1,
        "data": data,
        "locale": "en-US",
        "app_permissions": "0",
        "entitlements": [],
        "attachment_size_limit": 10_000_000,
        **where,
    }


def slash(
    path: str,
    token: str,
    *,
    channel: str = "111",
    guild: str | None = "77",
    uid: str = "42",
    perms: int = MANAGE_CHANNELS,
    parent: str | None = None,
    command: str = "papers",
    **values: object,
) -> dict:
    """`/papers <path> name:value ...`; ``path`` is e.g. "search" or "me subscribe"
    (``command``: another top-level command, e.g. "reading-group")."""
    *groups, leaf = path.split()
    node = [{"type": 1, "name": leaf, "options": _options(values)}]
    for g in reversed(groups):
        node = [{"type": 2, "name": g, "options": node}]
    data = {"id": "3000", "name": command, "type": 1, "options": node}
    return _payload(2, data, token, _where(channel, guild, uid, perms, parent))


def autocomplete(path: str, token: str, focused: str, typed: str, **values: object) -> dict:
    """Typing into option ``focused`` of `/papers <path>`."""
    p = slash(path, token, **values)
    p["type"] = 4
    ISSUED[p["id"]] = 4
    leaf = p["data"]["options"][-1]
    while leaf["type"] == 2:
        leaf = leaf["options"][-1]
    leaf["options"].append({"type": 3, "name": focused, "value": typed, "focused": True})
    return p


def press(
    fake,
    message: dict,
    custom_id: str,
    token: str,
    *,
    guild: str | None = "77",
    uid: str = "42",
    parent: str | None = None,
) -> dict:
    """A button press on ``message`` (a message the fake recorded)."""
    fake.originals[token] = message
    where = _where(message["channel_id"], guild, uid, MANAGE_CHANNELS, parent)
    msg = {"flags": 0, **message, "author": BOT}
    data = {"custom_id": custom_id, "component_type": 2}
    return {**_payload(3, data, token, where), "message": msg}


async def dispatch(client: discord.Client, payload: dict, timeout: float = 20.0) -> None:
    """Hand the payload to discord.py as the gateway would, and wait until it has been handled."""
    client._connection.parse_interaction_create(payload)
    me = asyncio.current_task()
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        busy = [
            t
            for t in asyncio.all_tasks()
            if t is not me
            and not t.done()
            and t.get_name().startswith(("CommandTree", "discord-ui"))
        ]
        if not busy:
            return
        await asyncio.wait(busy, timeout=end - loop.time())
    raise TimeoutError("interaction still running")


def custom_ids(message: dict) -> list[str]:
    """Every button custom_id on a recorded message."""
    return [
        b["custom_id"]
        for row in message.get("components", [])
        for b in row["components"]
        if "custom_id" in b
    ]


def _bare(label: str) -> str:
    """A label without the paper it names: '👍 #2' and '👍' -> '👍', 'More like #2' and
    'More like this' -> 'More like' (see embeds.numbered)."""
    return re.sub(r"\s+(?:this(?: one)?|#\d+)$", "", label)


def button(message: dict, label: str) -> str | None:
    """The custom_id of the first button labelled ``label`` (with or without its paper's
    number: 'More like this' finds 'More like #1'), if the message has one."""
    for row in message.get("components", []):
        for b in row["components"]:
            if "custom_id" in b and _bare(b.get("label") or "") == _bare(label):
                return b["custom_id"]
    return None


def embed_text(message: dict) -> str:
    """All visible text of a recorded message."""
    parts = [message.get("content") or ""]
    for e in message.get("embeds", []):
        parts += [e.get("title", ""), e.get("description", "")]
        parts += [f.get("value", "") for f in e.get("fields", [])]
    return "\n".join(parts)


@contextlib.asynccontextmanager
async def discord_bot(app, monkeypatch):
    """A logged-in client (REST only) against the fake, wired to the app."""
    with FakeDiscord() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.base)
        client = DigestClient(Deps(app.commands, app.channels), sync_on_change=False)
        await client.login("token")
        yield SimpleNamespace(client=client, fake=fake, app=app)
        await client.close()


@pytest.fixture(name="bot")
async def discord_app_bot(app, monkeypatch):
    """The `bot` fixture of the Discord app tests: :func:`discord_bot` for the test's ``app``.

    Test modules import ``discord_app_bot`` to use it as ``bot`` (a conftest fixture called
    ``bot`` would shadow the ``bot`` package in every other test)."""
    async with discord_bot(app, monkeypatch) as running:
        yield running


def callbacks(fake, token: str) -> int:
    """How many times the bot tried to acknowledge one interaction (Discord allows one)."""
    return sum(1 for m, p, _ in fake.calls if m == "POST" and p.endswith(f"/{token}/callback"))
