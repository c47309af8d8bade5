"""The `digestbot` app: shared options, `db upgrade` and `main`; commands live in bot/cli/*.py."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer
from typer.exceptions import Abort, TyperException

from digest.errors import DigestError

# Heavy modules (scikit-learn, SQLAlchemy, pydantic, chat SDKs) load inside the commands that
# use them, so `digestbot --help` and usage errors answer in well under a second.
if TYPE_CHECKING:
    from rich.console import Console

    from bot.app import App
    from bot.config import Settings


class _LazyConsole:
    """A rich Console made on first use: most commands print plain lines, and `channels` or
    `cmd … list` must not pay for loading rich (a third of their start-up time)."""

    def __init__(self, stderr: bool = False) -> None:
        self._stderr = stderr
        self._console: Console | None = None

    @property
    def file(self) -> TextIO:
        """Where it prints (the stream itself: asking for it loads nothing)."""
        if self._console is not None:
            return self._console.file
        return sys.stderr if self._stderr else sys.stdout

    def console(self) -> Console:
        """The rich Console itself (made now), for what needs the object (a progress bar)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(
                stderr=self._stderr, highlight=False, soft_wrap=True, emoji=False
            )
        return self._console

    def print(self, *objects: Any, **options: Any) -> None:
        """Console.print, on the console made now."""
        self.console().print(*objects, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.console(), name)


app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Research-paper digests for chat teams.",
)
papers_app = typer.Typer(no_args_is_help=True, help="Browse stored papers.")
db_app = typer.Typer(no_args_is_help=True, help="Database maintenance.")
app.add_typer(papers_app, name="papers")
app.add_typer(db_app, name="db")
out = _LazyConsole()
err = _LazyConsole(stderr=True)

DbOption = Annotated[
    str | None,
    typer.Option("--db", help="SQLAlchemy database URL (overrides DIGESTBOT_DATABASE_URL)."),
]


class _State:
    db: str | None = None
    settings: Settings | None = None


@app.callback()
def _root(
    ctx: typer.Context,
    db: DbOption = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
) -> None:
    """Research-paper digests for Slack, Discord and the console."""
    from bot.config import load_settings
    from bot.logs import configure

    _State.db = db
    if verbose:  # so -v details reach the log even when the settings themselves are refused
        configure("INFO", "text")
    _State.settings = load_settings()  # read once per invocation; the composition root gets it
    # A one-shot command's logged error is one line (its answer already said what failed); the
    # running bot's log keeps whole tracebacks for whoever operates it, as does -v.
    full = verbose or ctx.invoked_subcommand == "run"
    configure("INFO" if verbose else _State.settings.log_level, _State.settings.log_format, full)


def wired(
    db: str | None = None,
    strict_model: bool = True,
    out: TextIO | None = None,
    console: bool | None = True,
) -> App:
    """The application built by the composition root for this invocation (a configured embedding
    model that cannot be had is an error here, except for the long-running bot; ``out`` and
    ``console``: where console digests print and whether there is a console, see App)."""
    from bot.app import build

    settings = _State.settings
    return build(db or _State.db, settings, strict_model=strict_model, out=out, console=console)


@db_app.command("upgrade")
def db_upgrade(db: DbOption = None) -> None:
    """Apply database migrations (also done automatically on start)."""
    before, after, where = wired(db).upgrade()
    if before == after:
        said = f"database is up to date (revision {after}): {where}"
    elif before is None:
        said = f"database created (tables made, revision {after}): {where}"
    else:
        said = f"database upgraded from revision {before} to {after}: {where}"
    out.print(said, markup=False)


def fail(message: str) -> int:
    """Print one ``error:`` line (first line only, passwords hidden); the exit code is 2."""
    from digest.text.passwords import hide_password

    lines = str(message).strip().splitlines() or ["unknown error"]
    err.print(f"error: {hide_password(lines[0])}", markup=False)
    return 2


def _missing_command(exc: TyperException) -> str:
    """The line after the help a bare group prints (its exception has no message of its own)."""
    ctx = getattr(exc, "ctx", None)
    group = getattr(ctx, "command", None)
    names = sorted(getattr(group, "commands", {}) or {})
    if ctx is None or not names:
        return "unknown error"
    return f"missing command: '{ctx.command_path}' needs one of: {', '.join(names)}."


#: The modules that register commands, in the order their commands are listed in the help.
COMMAND_MODULES = (
    "bot.cli.papers",
    "bot.cli.channels",
    "bot.cli.library",
    "bot.cli.ops",
    "bot.cli.run",
)
#: Which module registers each top-level command or group (`db` is registered here). A command
#: missing from this map still works: every module is then imported, as for `--help`.
COMMAND_MODULE = {
    "ingest": "bot.cli.papers",
    "search": "bot.cli.papers",
    "papers": "bot.cli.papers",
    "cmd": "bot.cli.channels",
    "subscribe": "bot.cli.channels",
    "feedback": "bot.cli.channels",
    "digest": "bot.cli.channels",
    "channels": "bot.cli.channels",
    "import-library": "bot.cli.library",
    "export": "bot.cli.ops",
    "import": "bot.cli.ops",
    "discord": "bot.cli.ops",
    "run": "bot.cli.run",
    "db": "bot.cli.main",
}
_ROOT_FLAGS = ("-v", "--verbose")  # the root's options that take no value (`--db` takes one)


def command_name(argv: list[str]) -> str | None:
    """The top-level command ``argv`` names (after the root's own options), or None: no command,
    `--help`, or an option the root does not have (Typer then shows the help or the error)."""
    args = iter(argv)
    for arg in args:
        if arg == "--db":
            next(args, None)
        elif arg.startswith("--db=") or arg in _ROOT_FLAGS:
            continue
        elif arg.startswith("-"):
            return None
        else:
            return arg
    return None


def register(argv: list[str]) -> None:
    """Import the module that registers the command ``argv`` names, or every one (help, errors).

    Only that module: `digestbot channels` need not load the ingest, library and run commands'
    modules. The commands are then put in help order whatever was imported
    first (an earlier ``main`` in this process may have imported one module alone)."""
    import importlib

    wanted = COMMAND_MODULE.get(command_name(argv) or "")
    for module in (wanted,) if wanted else COMMAND_MODULES:
        importlib.import_module(module)
    place = {m: i for i, m in enumerate(COMMAND_MODULES)}
    app.registered_commands.sort(key=lambda c: place.get(getattr(c.callback, "__module__", ""), 0))


def main(argv: list[str] | None = None) -> int:
    """Entry point: every user-facing error is one line on stderr and exit code 2."""
    register(sys.argv[1:] if argv is None else argv)
    try:
        rv = app(args=argv, standalone_mode=False)
    except DigestError as exc:
        logging.getLogger("digestbot").info("error details", exc_info=True)  # shown with -v
        return fail(str(exc))
    except TyperException as exc:  # usage errors: bad option, missing argument, bad value
        said = exc.format_message()
        if not said or said == "Missing command.":  # bare, or after options only (-v, --db)
            said = _missing_command(exc) if _missing_command(exc) != "unknown error" else said
        return fail(said or "unknown error")
    except Abort:
        err.print("aborted", markup=False)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - the last resort: one line, never a traceback
        # INFO, not DEBUG: -v sets INFO, and "run with -v for details" must then show them
        logging.getLogger("digestbot").info("unexpected error", exc_info=True)
        return fail(f"{type(exc).__name__}: {exc} (run with -v for details)")
    return rv if isinstance(rv, int) else 0


#: Garbage-collector thresholds for a one-shot command (the interpreter's are 700, 10, 10).
ONE_SHOT_GC = (50_000, 20, 20)


def entry() -> int:
    """The `digestbot` script and `python -m bot`: ``main`` in a process of its own.

    Before the interpreter exits, every object still alive is frozen out of the garbage
    collector: its last full collection walked SQLAlchemy's, pydantic's and Typer's module
    objects for about 0.3 CPU-seconds, a third of what `digestbot channels` cost.
    Nothing else changes at exit (files are still flushed and closed, atexit handlers
    run); in-process callers (tests) use ``main``, so their objects stay collectable.

    A one-shot command also collects less often while it runs: loading SQLAlchemy, pydantic
    and Typer makes some hundred thousand objects that live to the end, and each collection
    along the way walked them again (about 3 % of `digestbot channels`). Cycles are still
    collected, every ``ONE_SHOT_GC`` new objects instead of 700; `run`, which lives on, keeps
    the interpreter's defaults."""
    import gc

    if command_name(sys.argv[1:]) != "run":
        gc.set_threshold(*ONE_SHOT_GC)
    try:
        return main()
    finally:
        gc.freeze()
