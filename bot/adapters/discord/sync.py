"""Registering /papers with Discord, and a record of where it was registered: a server copy
(`digestbot discord sync --guild`) next to the global one shows users every command twice."""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Protocol

import discord
from discord import app_commands

from bot.adapters.discord.command_rules import command_problems
from digest.errors import DigestError

log = logging.getLogger(__name__)
TREE_KEY = "discord.command_tree_hash"  # the global tree last synced
GUILDS_KEY = "discord.synced_guilds"  # {guild id: tree hash} of server copies
REMOVE_HINT = "digestbot discord sync --guild {id} --remove"


class KV(Protocol):
    """Where the sync record is kept (digest/channels/notes.py)."""

    def recall(self, key: str) -> str | None:
        """The value kept under ``key``, or None."""

    def remember(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key``."""


def tree_hash(tree: app_commands.CommandTree) -> str:
    """A fingerprint of the command definitions (what a sync would send)."""
    payload = [c.to_dict(tree) for c in tree.get_commands()]
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def guild_copies(kv: KV) -> dict[str, str]:
    """Servers holding their own copy of /papers, as recorded by `discord sync --guild`."""
    return json.loads(kv.recall(GUILDS_KEY) or "{}")


def duplicate_warning(kv: KV) -> str | None:
    """What to tell an operator whose servers see /papers twice; None when none do."""
    copies = guild_copies(kv)
    if not copies or kv.recall(TREE_KEY) is None:
        return None
    how = "; ".join(REMOVE_HINT.format(id=g) for g in sorted(copies))
    return (
        f"server(s) {', '.join(sorted(copies))} also have a server copy of /papers, so "
        f"people there see every command twice. Remove it with: {how}"
    )


def check(tree: app_commands.CommandTree, guild: discord.abc.Snowflake | None = None) -> None:
    """Refuse (DigestError, logged) a command list Discord would refuse, before sending it."""
    payload = [c.to_dict(tree) for c in tree.get_commands(guild=guild)]
    if problems := command_problems(payload):
        where = f"server {guild.id}" if guild else "globally"
        log.error(
            "Discord commands not synced %s; Discord would refuse them: %s",
            where,
            "; ".join(problems[:3]),
        )
        raise DigestError(f"commands not synced, Discord would refuse them: {problems[0]}")


async def sync_global(tree: app_commands.CommandTree, kv: KV) -> int:
    """Register the commands everywhere; returns how many were synced."""
    check(tree)
    synced = await tree.sync()
    kv.remember(TREE_KEY, tree_hash(tree))
    if warning := duplicate_warning(kv):
        log.warning(warning)
    return len(synced)


async def sync_guild(tree: app_commands.CommandTree, kv: KV, guild: int, remove: bool) -> int:
    """Copy the commands to one server (instant, for development), or remove that copy."""
    target = discord.Object(id=guild)
    tree.clear_commands(guild=target)
    if not remove:
        tree.copy_global_to(guild=target)
    check(tree, target)
    synced = await tree.sync(guild=target)
    copies = guild_copies(kv)
    if remove:
        copies.pop(str(guild), None)
    else:
        copies[str(guild)] = tree_hash(tree)
    kv.remember(GUILDS_KEY, json.dumps(copies, sort_keys=True))
    return len(synced)
