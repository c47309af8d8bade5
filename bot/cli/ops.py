"""`digestbot` operations commands: export/import of user data, and Discord command sync."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bot.cli.main import DbOption, app, wired
from bot.cli.options import whole
from digest.errors import DigestError
from digest.text.files import read_text_file

if TYPE_CHECKING:
    from bot.app import App

discord_app = typer.Typer(no_args_is_help=True, help="Discord maintenance.")
app.add_typer(discord_app, name="discord")


@discord_app.command("sync")
def discord_sync_cmd(
    guild: Annotated[
        int | None,
        typer.Option(
            "--guild",
            help="Sync to one server only (instant; for development).",
            parser=whole("--guild", 1, 2**63 - 1),  # a Discord id (snowflake)
        ),
    ] = None,
    remove: Annotated[
        bool, typer.Option("--remove", help="With --guild: delete that server's copy.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Register the /papers commands with Discord (globally, or in one server with --guild)."""
    application = wired(db)
    if application.discord is None:
        raise DigestError("Set DIGESTBOT_DISCORD_TOKEN first.")
    if remove and guild is None:
        raise DigestError("--remove needs --guild ID (the server whose copy to delete).")
    asyncio.run(_discord_sync(application, guild, remove))


async def _discord_sync(application: App, guild: int | None, remove: bool) -> None:
    import discord  # only when Discord is configured

    from bot.adapters.discord import sync

    client, kv = application.discord, application.channels.notes
    client.sync_on_change = False  # this command syncs explicitly
    try:
        await client.login(application.settings.discord_token.get_secret_value())
        if guild is None:
            print(f"synced {await sync.sync_global(client.tree, kv)} command(s) globally")
        elif remove:
            await sync.sync_guild(client.tree, kv, guild, remove=True)
            print(f"removed the /papers copy from server {guild}")
        else:
            count = await sync.sync_guild(client.tree, kv, guild, False)
            print(f"synced {count} command(s) to server {guild}")
        if warning := sync.duplicate_warning(kv):
            print(f"note: {warning}")
    except discord.LoginFailure as exc:
        raise DigestError(f"Discord login failed: {exc}") from None
    except (discord.HTTPException, OSError) as exc:  # aiohttp's connection errors are OSErrors
        raise DigestError(f"Discord sync failed: {exc}") from None
    finally:
        await client.close()  # also after a failed login, so no "Unclosed client session"


#: Tables holding credentials (Slack OAuth installations and their bot tokens).
SECRET_TABLES = ("slack_installations", "slack_bots")


def _write_private(file: Path, text: str) -> None:
    """Write ``text`` readable by its owner only (0600), even if the file existed."""
    fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


@app.command("export")
def export_cmd(
    file: Path,
    include_secrets: Annotated[
        bool,
        typer.Option(
            "--include-secrets",
            help="Also export Slack workspace installations (bot tokens): needed to move a "
            "multi-workspace deployment. Keep the file like a password.",
        ),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    db: DbOption = None,
) -> None:
    """Write channels, subscriptions, feedback and delivery history (and the papers they cite) as JSON."""
    from digest.transfer.portable import dumps

    if not file.parent.is_dir():
        raise DigestError(f"Folder {file.parent} does not exist; create it first.")
    application = wired(db)
    _refuse_overwrite(file, application.database_url, force)
    doc = application.papers.export_state(SECRET_TABLES if include_secrets else ())
    try:  # user data (and maybe tokens): owner-only, always
        _write_private(file, dumps(doc))
    except OSError as exc:
        raise DigestError(f"Cannot write {file}: {exc.strerror}.") from exc
    print(
        f"exported {len(doc['channels'])} channels, {len(doc['subscriptions'])} subscriptions, "
        f"{len(doc['feedback'])} votes, {len(doc['deliveries'])} digests, "
        f"{len(doc.get('weekly_pictures', []))} weekly pictures to {file}"
    )
    if include_secrets:
        installs = len(doc["secrets"]["slack_bots"])
        print(
            f"included {installs} Slack workspace installation(s) with their tokens (file mode 0600)"
        )


def _refuse_overwrite(file: Path, database_url: str, force: bool) -> None:
    """Never write over the database itself; write over another file only with --force."""
    from sqlalchemy.engine import make_url

    url = make_url(database_url)
    if url.drivername.startswith("sqlite") and url.database:
        db_file = Path(url.database).resolve()
        suffixes = ("", "-wal", "-shm", "-journal")
        if file.resolve() in {db_file.with_name(db_file.name + s) for s in suffixes}:
            raise DigestError(f"{file} is the database itself; export to another file.")
    if file.exists() and not force:
        raise DigestError(f"{file} already exists; pass --force to overwrite it.")


@app.command("import")
def import_cmd(file: Path, db: DbOption = None) -> None:
    """Load an export into an empty database (e.g. moving from SQLite to PostgreSQL)."""
    text = read_text_file(file)
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise DigestError(f"{file} is not valid JSON: {exc}") from exc
    counts = wired(db).papers.import_state(doc, SECRET_TABLES)
    print("imported " + ", ".join(f"{n} {k}" for k, n in counts.items()))
