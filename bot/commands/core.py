"""The `/papers` command core: one parser and handler registry used unchanged by every platform."""

from __future__ import annotations

import logging
import re
import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING

from bot.commands.replies import Reply, error
from digest.channels.access import may_change
from digest.channels.service import ChannelService
from digest.delivery.digests import Digests
from digest.errors import DigestError
from digest.models import ChannelRef
from digest.text.characters import has_surrogates, has_visible

if TYPE_CHECKING:
    from digest.library.seed import LibraryImports
    from digest.mentions.service import Mentions
    from digest.reading.service import ReadingGroups
    from digest.zotero.service import ZoteroService

log = logging.getLogger(__name__)
MAX_COMMAND_CHARS = 4000
#: A lone surrogate (a JSON ``\ud800`` from Slack or Discord: half a character) can be neither
#: stored nor shown; refused before any handler runs, so nothing half-written is kept.
BROKEN_TEXT = (
    "That command holds a broken character (half of an emoji or symbol); please retype it."
)
#: Commands that read (or empty) a channel's digest: on a shared channel or personal digest
#: nobody set up they answer without creating it, so a look at `list` never starts a digest (docs/commands.md, `list`).
READS_CHANNEL = frozenset({"list", "stats", "why", "digest", "export", "unsubscribe"})
#: Commands whose text is a pasted file: its line breaks are kept (every other text is one line).
KEEPS_LINES = frozenset({"import"})
NO_PERSONAL = "You have no personal digest yet; `/papers me subscribe <topic>` sets it up."
NO_CHANNEL = "This channel has no digest yet; `/papers subscribe <topic>` sets it up."
# `--public` shares the answer in the channel (Slack, Discord); the console has no one to share with.
# Autocorrect turns `--` into an em or en dash, so `—public` and `–public` mean the same.
PUBLIC = re.compile(r"(?i)(?<!\S)(?:--|\u2014|\u2013)public(?!\S)")


@dataclass(frozen=True)
class Context:
    """Who typed the command, where, and what the platform says about them."""

    ref: ChannelRef
    user: str
    is_admin: bool = True
    dm: ChannelRef | None = None  # the user's direct-message channel, for `me` commands
    #: When it was typed; None: Commands fills it in from the one clock (digest/clock/__init__.py), so
    #: every date a command derives agrees with the scheduler's and the CLI's.
    now: datetime | None = None
    personal: bool = False
    name: str = ""  # how others read who it was: a display name, or "the command line"
    place: str = ""  # the channel's name as the platform shows it ("general"), if it says
    #: Channel ids of this workspace the person can see, as their platform says (`top` counts
    #: only these and the channel asked in); the default, nothing else, is what an adapter that
    #: did not ask gets. None: every channel (the console and the command line: nobody else).
    visible: frozenset[str] | None = frozenset()
    #: Whether everyone in the workspace can see the channel, as the platform says (recorded:
    #: only a public channel's 👍 is named in other channels' digests); None: it did not say.
    public: bool | None = None
    #: The answer is shared in the channel (`--public`, Discord's public:True): whatever it
    #: counts must be what every reader of the channel may see, not the asker's view.
    shared: bool = False
    #: Where a `me` command was typed (the channel before ``ref`` became the person's own
    #: digest): `me mention on` acts on this channel. None: not a `me` command.
    typed_in: ChannelRef | None = None

    @property
    def who(self) -> str:
        """The caller as a pause reason names them: their display name, else their id."""
        return self.name or self.user


def _drop_public(text: str) -> str:
    """``text`` without the `--public` flag, single-spaced."""
    return " ".join(PUBLIC.sub(" ", text).split())


#: Search filters typed as `key:value`, with an example of each.
FILTERS = {"venue": "venue:NeurIPS", "year": "year:2026", "author": 'author:"Ada Lovelace"'}


@dataclass(frozen=True)
class Args:
    """The text after the subcommand: raw, as words, and any key:value filters.

    ``options`` holds values a platform with typed options (Discord) passed as values; handlers
    prefer them to anything parsed from text, so a value never leaks into the text syntax.
    """

    raw: str
    words: tuple[str, ...]
    filters: dict[str, str]
    options: Mapping[str, object] = field(default_factory=dict)
    #: Filters typed wrongly (`venue:` with no value, `year:` twice): search refuses them.
    filter_errors: tuple[str, ...] = ()

    @classmethod
    def typed(
        cls, *words: object, filters: Mapping[str, object] | None = None, **options: object
    ) -> Args:
        """Arguments from typed values: each word is one value, whatever characters it holds."""
        ws = tuple(str(w) for w in words if w not in (None, ""))
        fs = {k: str(v) for k, v in (filters or {}).items() if v not in (None, "")}
        return cls(" ".join(ws), ws, fs, dict(options))

    @classmethod
    def parse(cls, raw: str) -> Args:
        raw = raw.strip()
        try:
            parts = shlex.split(raw)
        except ValueError:  # an unbalanced quote: fall back to plain words
            parts = raw.split()
        filters, words, errors = {}, [], []
        for part in parts:
            key, sep, value = part.partition(":")
            key = key.lower()
            if not (sep and key in FILTERS):
                words.append(part)
            elif not has_visible(value):  # else `venue:` became the query word 'venue'
                errors.append(f"{key}: needs a value, e.g. `{FILTERS[key]}`.")
            elif key in filters:  # one value each: the last silently winning hid the first
                errors.append(f"{key}: given twice ({filters[key]!r} and {value!r}); give it once.")
            else:
                filters[key] = value
        return cls(raw, tuple(words), filters, filter_errors=tuple(errors))

    @property
    def text(self) -> str:
        """The words without filters, single-spaced."""
        return " ".join(self.words)

    @property
    def asks_public(self) -> bool:
        """True when `--public` (share the answer in the channel) was typed among the words."""
        return PUBLIC.search(self.raw) is not None

    def without_public(self) -> Args:
        """The arguments without `--public`: a flag for the platform, never query or topic text."""
        if not self.asks_public:
            return self
        words = tuple(w for w in map(_drop_public, self.words) if w)  # typed values may hold it
        return Args(_drop_public(self.raw), words, self.filters, self.options, self.filter_errors)


Handler = Callable[["Commands", Context, Args], Reply]


@dataclass(frozen=True)
class Spec:
    """A subcommand: its handler, usage line, help text, and whether it changes channel settings."""

    name: str
    handler: Handler
    usage: str
    help: str
    changes_channel: bool = False
    #: The answer is the asker's alone, whatever `--public` says (it would tell the channel
    #: something about that person, such as whether they opted in to mentions).
    private: bool = False


REGISTRY: dict[str, Spec] = {}
ALIASES = {
    "sub": "subscribe",
    "unsub": "unsubscribe",
    "ls": "list",
    "show": "paper",
    "like": "up",
    "dislike": "down",
}


def command(
    name: str, usage: str, help: str, changes_channel: bool = False, private: bool = False
) -> Callable[[Handler], Handler]:
    """Register a subcommand handler."""

    def wrap(fn: Handler) -> Handler:
        REGISTRY[name] = Spec(name, fn, usage, help, changes_channel, private)
        return fn

    return wrap


class Commands:
    """Parses `/papers ...` text and runs the matching handler; every outcome is a Reply."""

    def __init__(
        self,
        channels: ChannelService,
        observe: Callable[[str, float], None] | None = None,
        digests: Digests | None = None,
        zotero: ZoteroService | None = None,
    ) -> None:
        self.channels = channels
        self.papers = channels.papers
        self.digests = digests or Digests(channels)
        self.observe = observe  # (platform, seconds) -> None, e.g. a latency histogram
        self.zotero = zotero  # people's Zotero libraries (handlers_zotero.py); None: not built

    @cached_property
    def mentions(self) -> Mentions:
        """Mention opt-ins and `why` for the person mentioned (handlers_mentions.py)."""
        from digest.mentions.service import Mentions

        return Mentions.over(self.channels)

    @cached_property
    def imports(self) -> LibraryImports:
        """Library imports (`import`): made on first use, so the file readers load with it."""
        from digest.library.seed import LibraryImports

        return LibraryImports.over(self.channels)

    @cached_property
    def reading(self) -> ReadingGroups:
        """The reading group (`reading-group`, `nominate`): made on first use."""
        from digest.reading.service import ReadingGroups

        return ReadingGroups(self.channels)

    def handle(self, text: str, ctx: Context) -> Reply:
        """Run one command typed as text. Never raises: errors become short ephemeral replies."""
        return self._guard(ctx, lambda: self._dispatch(text, ctx))

    def invoke(self, name: str, ctx: Context, args: Args, personal: bool = False) -> Reply:
        """Run one subcommand with already-typed arguments (no text parsing); never raises."""
        typed = [args.raw, *args.words, *args.filters.values(), *map(str, args.options.values())]
        if any(has_surrogates(v) for v in (*typed, ctx.user or "")):
            return error(BROKEN_TEXT)
        return self._guard(ctx, lambda: self._run(name.lower(), ctx, args, personal))

    def _guard(self, ctx: Context, work: Callable[[], Reply]) -> Reply:
        started = time.perf_counter()
        try:
            return work()
        except DigestError as exc:
            return error(str(exc))
        except Exception:  # noqa: BLE001 - a bug must not crash the bot or leak a traceback to chat
            where = {
                "platform": ctx.ref.platform,
                "workspace": ctx.ref.workspace,
                "channel": ctx.ref.channel_id,
            }
            log.exception(
                "command failed (platform=%s channel=%s)",
                ctx.ref.platform,
                ctx.ref.channel_id,
                extra=where,
            )
            return error(
                "Something went wrong on our side; the error was logged. Please try again."
            )
        finally:
            if self.observe is not None:
                self.observe(ctx.ref.platform, time.perf_counter() - started)

    def _dispatch(self, text: str, ctx: Context) -> Reply:
        text = (text or "").replace("\x00", "").strip()
        if has_surrogates(text) or has_surrogates(ctx.user or ""):  # `cmd --user` bytes too
            return error(BROKEN_TEXT)
        if len(text) > MAX_COMMAND_CHARS:
            return error(
                f"That command is too long ({len(text):,} characters; the limit is {MAX_COMMAND_CHARS:,})."
            )
        public = PUBLIC.search(text) is not None  # anywhere, even before the subcommand
        name, personal, rest = _split(_drop_public(text))
        if ALIASES.get(name, name) in KEEPS_LINES:  # only the flag goes: RIS is a line format
            rest = _split(PUBLIC.sub(" ", text))[2]
        return self._run(name, ctx, Args.parse(rest), personal, public)

    def target(self, text: str, ctx: Context) -> tuple[ChannelRef, bool]:
        """The channel a typed command acts on, and whether it sets that channel up (so may
        create it): settings commands do; reading, voting and unsubscribing do not."""
        name, personal, _ = _split(_drop_public(text or ""))
        spec = REGISTRY.get(ALIASES.get(name, name or "help"))
        creates = spec is not None and spec.changes_channel and spec.name != "unsubscribe"
        return (ctx.dm if personal and ctx.dm else ctx.ref), creates

    def _run(
        self, name: str, ctx: Context, args: Args, personal: bool, public: bool = False
    ) -> Reply:
        if personal:
            if ctx.dm is None:
                return error("Personal digests are not available here.")
            ctx = replace(ctx, ref=ctx.dm, personal=True, is_admin=True, typed_in=ctx.ref)
        elif ctx.ref.personal:  # typed in a DM with the app: the same digest
            ctx = replace(ctx, personal=True)
        if ctx.now is None:  # read once per command: every date it derives is of one instant
            ctx = replace(ctx, now=self.channels.clock())
        name = ALIASES.get(name, name or "help")
        spec = REGISTRY.get(name)
        if spec is None:
            return error(unknown_command(name))
        if name in READS_CHANNEL and self.channels.lookup.get(ctx.ref) is None:
            return error(NO_PERSONAL if ctx.ref.personal else NO_CHANNEL)
        if spec.changes_channel and (refused := self.refusal(ctx)) is not None:
            return refused
        if not ctx.personal and (spec.changes_channel or ctx.place or ctx.public is not None):
            who = ctx.user if spec.changes_channel else None
            self.channels.claim(ctx.ref, who, ctx.place, ctx.public)
        shared = (public or args.asks_public or ctx.shared) and not spec.private
        reply = spec.handler(self, replace(ctx, shared=shared), args.without_public())
        return replace(reply, public=True) if shared and not reply.error else reply

    def refusal(self, ctx: Context) -> Reply | None:
        """The error for someone who may not change this channel's digest; None if they may."""
        channel = self.channels.channel(ctx.ref)
        # A personal digest reached here is the caller's own (`me`, a DM with the app) or the
        # operator's choice on the command line.
        restricted = self.channels.restricted_platforms
        if ctx.personal or may_change(channel, ctx.user, ctx.is_admin, restricted):
            return None
        return error(
            "Only channel admins can change this channel's digest here. "
            "Use `/papers me ...` to set up your own digest."
        )


def unknown_command(name: str) -> str:
    """'Unknown command …' with the command it most likely meant ('schedual' -> schedule,
    'subscirbe' -> subscribe, '/paper' -> /papers), by difflib's closeness."""
    import difflib

    typed = name[:30]
    if typed.startswith("/"):  # "/paper list": the slash command itself mistyped
        if difflib.SequenceMatcher(None, typed.lower(), "/papers").ratio() >= 0.6:
            return (
                f"Unknown command {typed!r}; did you mean `/papers`? (`/papers help` lists them.)"
            )
        return f"Unknown command {typed!r}. Commands start with `/papers`: try `/papers help`."
    close = difflib.get_close_matches(typed.lower(), [*REGISTRY, *ALIASES], n=1, cutoff=0.7)
    if close:
        meant = ALIASES.get(close[0], close[0])
        return f"Unknown command {typed!r}; did you mean `/papers {meant}`? (`/papers help` lists them.)"
    return f"Unknown command {typed!r}. Try `/papers help`."


def _split(text: str) -> tuple[str, bool, str]:
    """(subcommand in lower case, whether it is a `me` command, the rest) of a typed command."""
    text = (text or "").replace("\x00", "").strip()
    first, after = _first_word(text)
    if first.lower() == "/papers":  # '/paperssize' is not '/papers size'
        text = after.strip()
    name, rest = _first_word(text)
    personal = name.lower() == "me"
    if personal:
        name, rest = _first_word(rest.strip())
    return name.lower(), personal, rest


def _first_word(text: str) -> tuple[str, str]:
    """The first word and the rest (after any whitespace: a pasted file's first line break too)."""
    parts = re.split(r"\s", text, maxsplit=1)
    return parts[0], parts[1] if len(parts) > 1 else ""


#: Reactions name a message, not a paper: only a message showing one paper can take them; on
#: one with several the bot asks which paper (bot/commands/reactions.py).
REACTIONS = (
    "👍/👎 buttons vote on the paper they are under; pressing the same one again (not a double "
    "click) withdraws the vote. A 👍/👎 reaction counts on a message showing one paper (threaded digests: "
    "`/papers option threads on`); on a message with several papers it counts for none, and you "
    "are asked privately which one you meant (Discord: by direct message)."
)


def help_reply() -> Reply:
    """Every subcommand with its usage."""
    lines = [f"`/papers {s.usage}` — {s.help}" for s in REGISTRY.values()]
    lines.append(
        "`/papers me <command>` — the same commands for your personal digest by direct message."
    )
    lines.append(
        "`--public` after any command — share the answer in the channel (Slack, Discord); "
        "answers are private otherwise. The console has no one else: there it changes nothing."
    )
    lines.append(REACTIONS)
    return Reply(text="\n".join(lines), title="digestbot commands")
