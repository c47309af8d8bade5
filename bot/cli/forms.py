"""Private forms at the console: what Slack and Discord ask in a modal, asked at the terminal,
the secret fields without echo (getpass)."""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable

from bot.commands import Commands, Context
from bot.commands.core import Args
from bot.commands.replies import Reply, error

#: Asks one field: (label, secret) -> the answer, or None when nobody can answer here.
Ask = Callable[[str, bool], "str | None"]
NO_TERMINAL = (
    "Connecting Zotero asks for your API key without showing it: run "
    "`/papers me zotero connect` at the console prompt in a terminal."
)


def terminal_ask(label: str, secret: bool) -> str | None:
    """Ask at the terminal; a secret is read without echo. None when stdin is not a terminal."""
    if not sys.stdin.isatty():
        return None
    try:
        if secret:
            return getpass.getpass(f"{label}: ")  # /dev/tty, echo off
        # The terminal itself, not sys.stdout: the console prompt redirects that while it runs.
        with (
            open("/dev/tty", "w", encoding="utf-8") as out,
            open("/dev/tty", encoding="utf-8") as inp,
        ):
            out.write(f"{label}: ")
            out.flush()
            return inp.readline().strip()
    except OSError:
        return None
    except (EOFError, KeyboardInterrupt):
        return ""


def fill_form(commands: Commands, reply: Reply, ctx: Context, ask: Ask) -> Reply:
    """Ask the fields of ``reply``'s form, then run the command they complete."""
    from bot.commands.handlers_zotero import FORM_FIELDS, FORM_ZOTERO

    if reply.form != FORM_ZOTERO:
        return reply
    values: dict[str, str] = {}
    for name, label, secret in FORM_FIELDS:
        answer = ask(label, secret)
        if answer is None:
            return error(NO_TERMINAL)
        if not answer.strip():
            return error("Nothing was stored: the form was left empty.")
        values[name] = answer.strip()
    args = Args.typed("connect", library=values["library"], key=values["key"])
    return commands.invoke("zotero", ctx, args, personal=True)
