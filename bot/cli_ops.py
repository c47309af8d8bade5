"""`digestbot` operations commands: export/import of user data, and Discord command sync."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bot.cli import DbOption, app, wired
from digest.errors import DigestError

if TYPE_CHECKING:
    from bot.app import App

discord_app = typer.Typer(no_args_is_help=True, help="Discord maintenance.")
app.add_typer(discord_app, name="discord")


@discord_app.command("sync")
def discord_sync_cmd(
    guild: Annotated[
        int | None,
        typer.Option("--guild", help="Sync to one server only (instant; for development)."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Register the /papers commands with Discord (globally, or in one server with --guild)."""
    application = wired(db)
    if application.discord is None:
        raise DigestError("Set DIGESTBOT_DISCORD_TOKEN first.")
    asyncio.run(_discord_sync(application, guild))


async def _discord_sync(application: App, guild: int | None) -> None:
    import discord  # only when Discord is configured

    client = application.discord
    client.sync_on_change = False  # this command syncs explicitly
    try:
        await client.login(application.settings.discord_token.get_secret_value())
        target = discord.Object(id=guild) if guild else None
        if target is not None:
            client.tree.copy_global_to(guild=target)
        synced = await client.tree.sync(guild=target)
        if target is None:
            application.store.kv.set("discord.command_tree_hash", client.tree_hash())
        print(
            f"synced {len(synced)} command(s) {'to server ' + str(guild) if guild else 'globally'}"
        )
    except discord.LoginFailure as exc:
        raise DigestError(f"Discord login failed: {exc}") from None
    except (discord.HTTPException, OSError) as exc:  # aiohttp's connection errors are OSErrors
        raise DigestError(f"Discord sync failed: {exc}") from None
    finally:
        await client.close()  # also after a failed login, so no "Unclosed client session"


@app.command("export")
def export_cmd(file: Path, db: DbOption = None) -> None:
    """Write channels, subscriptions, feedback and delivery history (and the papers they cite) as JSON."""
    from digest.portable import dumps, export_state

    if not file.parent.is_dir():
        raise DigestError(f"Folder {file.parent} does not exist; create it first.")
    doc = export_state(wired(db).store)
    try:
        file.write_text(dumps(doc), encoding="utf-8")
    except OSError as exc:
        raise DigestError(f"Cannot write {file}: {exc.strerror}.") from exc
    print(f"exported {len(doc['channels'])} channels, {len(doc['subscriptions'])} subscriptions, "
          f"{len(doc['feedback'])} votes, {len(doc['deliveries'])} digests to {file}")  # fmt: skip


@app.command("import")
def import_cmd(file: Path, db: DbOption = None) -> None:
    """Load an export into an empty database (e.g. moving from SQLite to PostgreSQL)."""
    from digest.portable import import_state

    if not file.exists():
        raise DigestError(f"No such file: {file}")
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DigestError(f"{file} is not valid JSON: {exc}") from exc
    counts = import_state(wired(db).store, doc)
    print("imported " + ", ".join(f"{n} {k}" for k, n in counts.items()))
