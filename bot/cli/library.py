"""`digestbot import-library CHANNEL FILE`, and `/papers import PATH` typed at the console."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bot.cli.main import DbOption, app, wired
from bot.cli.options import UserOption, _ref, cli_user
from digest.errors import DigestError
from digest.models import ChannelRef

if TYPE_CHECKING:
    from bot.commands import Commands, Context
    from bot.commands.replies import Reply


def read_upload(path: str) -> object:
    """The file at ``path`` as an Upload for `import`; a DigestError says why it cannot be read."""
    from bot.commands.handlers_library import Upload
    from digest.library.entries import (
        MAX_IMPORT_BYTES,  # the parsers load with an import, not --help
    )

    file = Path(path).expanduser()
    try:
        size = file.stat().st_size
        if not file.is_file():
            raise DigestError(f"{path} is not a file.")
        if size > MAX_IMPORT_BYTES:  # said before reading a huge file into memory
            raise DigestError(
                f"{file.name} is {size / 1e6:.1f} MB; the limit is {MAX_IMPORT_BYTES / 1e6:.0f} MB."
            )
        return Upload(file.name, file.read_bytes())
    except FileNotFoundError:
        raise DigestError(f"No such file: {path}") from None
    except OSError as exc:
        raise DigestError(f"Cannot read {path}: {exc.strerror}") from None


#: A text shaped like a path: read as one (its errors said) rather than as pasted ids.
PATH_LIKE = re.compile(r"(?i)^(?:[/~]|\.{1,2}/)|\.(?:bib|ris|csv|txt)$")


def _local_path(rest: str) -> str | None:
    """The path in `import PATH` when the text names an existing file or looks like a path (so a
    wrong one is said as such), else None: the text is pasted ids. `--public` is dropped: the
    console has no one to share with."""
    from bot.commands.core import _drop_public

    text = _drop_public(rest).strip("'\"") if "\n" not in rest.strip() else ""
    if not text or len(text) > 1000:
        return None
    try:
        exists = Path(text).expanduser().is_file()
    except (OSError, RuntimeError):  # a name too long, or `~nobody`: said when read, if path-like
        exists = False
    return text if exists or PATH_LIKE.search(text) else None


def handle_console(commands: Commands, text: str, ctx: Context) -> Reply:
    """A line typed at the console or given to `cmd`: `import PATH` reads that file first (only
    here: a chat user never names a file on the bot's machine); anything else as typed."""
    from bot.commands.core import Args, _split
    from bot.commands.replies import error

    name, personal, rest = _split(text)
    path = _local_path(rest) if name == "import" else None
    if path is None:
        return commands.handle(text, ctx)
    try:
        upload = read_upload(path)
    except DigestError as exc:
        return error(str(exc))
    return commands.invoke("import", ctx, Args.typed(file=upload), personal=personal)


@app.command("import-library")
def import_library_cmd(
    channel: str,
    file: Annotated[
        str, typer.Argument(help="A .bib, .ris or Zotero .csv export, or a list of ids.")
    ],
    user: UserOption = None,
    db: DbOption = None,
) -> None:
    """Follow papers like those in a library file: each entry becomes a `like:` of CHANNEL.

    Exit code 0 when every entry was imported, 1 when some were skipped (the reply lists them),
    2 when nothing could be read (one error: line)."""
    from bot.commands import Context
    from bot.commands.core import Args

    ref = _ref(channel)
    upload = read_upload(file)  # before the database: a wrong path costs nothing
    who = cli_user(user, ref)
    application = wired(db)
    me = ChannelRef(ref.platform, f"@{who}", ref.workspace)
    ctx = Context(ref, who, dm=me, now=application.clock(), name="" if user else "the command line")
    from bot.adapters.console import readable  # plain text: no chat Markdown on a terminal

    reply = application.commands.invoke("import", ctx, Args.typed(file=upload))
    if reply.error:
        raise DigestError(readable(reply.text))
    print(readable(reply.text))
    if not re.search(r"skipped 0\.$", reply.text.splitlines()[0]):  # some entries left out
        raise typer.Exit(1)
