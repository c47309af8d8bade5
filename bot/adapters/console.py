"""Console adapter: a full peer of Slack and Discord that renders replies as text in a terminal."""

from __future__ import annotations

import asyncio
import itertools
import re
import sys
import threading
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from textwrap import indent
from typing import TYPE_CHECKING, TextIO

from bot.adapters.outgoing import clean_reply, clean_text
from bot.adapters.render_text import labelled
from bot.commands.replies import Card, Reply, why_parts
from bot.ports import GONE, PostError
from digest.models import ChannelRef
from digest.text.links import is_http

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

CODE = re.compile(r"`([^`\n]+)`")
# *bold*, **bold**, _italic_: marks around text that starts and ends with a non-space, not inside
# a word (snake_case and 2*3*4 stay as typed).
EMPHASIS = re.compile(r"(?<![\w*])(\*\*|\*|_)(?=\S)([^\n]+?)(?<=\S)\1(?![\w*])")
LINKS = (
    re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)"),  # [text](url)
    re.compile(r"<(https?://[^|>\s]+)\|([^>\n]+)>"),  # <url|text> (Slack's form)
)


def readable(text: str) -> str:
    """Chat Markdown as a terminal shows it: emphasis marks dropped, links as 'text (url)',
    code spans without their backticks (a command to type reads as itself)."""
    out, at = [], 0
    for m in CODE.finditer(text):
        out += [_plain(text[at : m.start()]), m.group(1)]
        at = m.end()
    return "".join([*out, _plain(text[at:])])


def _plain(text: str) -> str:
    text = LINKS[0].sub(lambda m: f"{m.group(1)} ({m.group(2)})", text)
    text = LINKS[1].sub(lambda m: f"{m.group(2)} ({m.group(1)})", text)
    return EMPHASIS.sub(lambda m: m.group(2), text)


def render_card(c: Card) -> str:
    """A paper as a few indented lines."""
    head = f"{c.rank}. " if c.rank is not None else "• "
    lines = [f"{head}{c.title}"]
    meta = " · ".join(x for x in (c.authors, c.venue, c.paper_id) if x)
    lines.append(f"   {meta}")
    # Each part under its own label, its lines hung under the label's text, so the TL;DR never
    # runs into the abstract's snippet below it.
    if c.tldr:
        lines += labelled("TL;DR", c.tldr)
    if c.snippet:
        lines += labelled("abstract", c.snippet)
    if c.why:
        why = "".join(f"“{t}”" if em else t for t, em in why_parts(c.why))  # a liked title
        lines.append(f"   why: {why}" + (f" ({c.score:.2f})" if c.score is not None else ""))
    if c.mentions:  # the console's users are names: nobody else is pinged
        lines.append("   → " + " ".join(f"@{clean_text(u)}" for u in c.mentions))
    links = [f"{a.label}: {a.url}" for a in c.actions if a.kind == "link" and is_http(a.url)]
    if links:
        lines.append("   " + " · ".join(links))
    if any(a.kind == "up" for a in c.actions):
        lines.append(
            f"   feedback: /papers up {c.paper_id} · /papers down {c.paper_id} · /papers similar {c.paper_id}"
        )
    for a in c.actions:  # a reading-group poll's button, as the command it runs
        if a.kind == "rg_vote":
            paper, poll = a.value.split(" ", 1)[1], a.value.split(" ", 1)[0]
            lines.append(f"   🗳 vote: /papers reading-group vote {paper} {poll}")
    if any(a.kind == "save" for a in c.actions):  # the "📚 Save to Zotero" button, as a command
        lines.append(f"   📚 Save to Zotero: /papers save {c.paper_id}")
    return "\n".join(lines)


def render(reply: Reply) -> str:
    """A reply as plain text (no Markdown marks: see readable); buttons become the commands
    that do the same thing. The console and `digestbot cmd` both print this."""
    reply = clean_reply(reply)  # every reply and digest passes here: one sanitiser for all text
    parts = []
    if reply.title:
        parts.append(reply.title)
    if reply.text:
        parts.append(("⚠ " if reply.error else "") + readable(reply.text))
    parts += [render_card(c) for c in reply.cards]
    pages = [f"{a.label}: /papers {a.value}" for a in reply.actions if a.kind == "page"]
    if pages:
        parts.append(" · ".join(pages))
    if reply.attachment:
        name, content = reply.attachment
        parts.append(f"--- {name} ---\n{content}")
    if reply.footer:
        parts.append(readable(reply.footer))
    return "\n".join(parts)


def save_attachment(reply: Reply, folder: Path) -> Reply:
    """The reply with its attached export (and picture) written to ``folder`` (a later one of the
    same name replaces it) and the path said instead of the file; unchanged without one."""
    if reply.image is not None:
        pic = reply.image
        try:
            path = write_picture(folder, pic.filename, pic.png)
            said = f"Picture written to {path}"
        except OSError as exc:
            said = f"(could not write the picture to {folder}: {exc.strerror})"
        reply = replace(reply, text=f"{reply.text}\n{said}", image=None)
    if reply.attachment is None:
        return reply
    name, content = reply.attachment
    path = folder / Path(name).name  # only a bare name: an attachment never picks the folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    except OSError as exc:  # a full or read-only disk: show it inline as before, and say why
        return replace(reply, text=f"{reply.text}\n(could not write {path}: {exc.strerror})")
    return replace(reply, text=f"{reply.text}\nWritten to {path.resolve()}", attachment=None)


def write_picture(folder: Path, name: str, png: bytes) -> Path:
    """Write a PNG into ``folder`` under a bare ``name`` (atomically: a reader never sees half
    a file); its absolute path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = (folder / Path(name).name).resolve()
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(png)
    tmp.replace(path)
    return path


class ConsoleOutlet:
    """A console answer (the prompt's, or `digestbot cmd`'s) collected as the text to print; an
    attached file is written to ``folder`` (see save_attachment)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.lines: list[str] = []

    async def attach(self, reply: Reply) -> Reply:
        return save_attachment(reply, self.folder)

    async def answer(self, reply: Reply) -> None:
        self.lines.append(render(reply))

    async def tell(self, text: str) -> None:
        self.lines.append(text)

    @property
    def text(self) -> str:
        """Everything said, in order."""
        return "\n".join(self.lines)


class ConsoleAdapter:
    """Posts to a text stream; a transcript file records the key of each digest printed (not its text)."""

    platform = "console"

    def __init__(
        self,
        out: TextIO | None = None,
        transcript: Path | None = None,
        pictures: Path | None = None,
    ) -> None:
        self._out = out
        self.transcript = transcript
        # Where pictures go: beside the transcript (the data folder) unless given
        self.pictures = pictures or (transcript.parent if transcript else Path.cwd())

    @property
    def out(self) -> TextIO:
        """The stream given, else sys.stdout as it is now: while the prompt is up that is
        prompt_toolkit's proxy, which prints a digest above the prompt and redraws it."""
        return self._out or sys.stdout

    def plan(self, reply: Reply) -> list[tuple[str, ...]]:
        """A console digest is one message carrying every paper."""
        return [tuple(c.paper_id for c in reply.cards)]

    async def post_part(
        self,
        ref: ChannelRef,
        reply: Reply,
        position: int,
        key: str,
        parent: str | None,
        degrade: bool = False,
    ) -> str:
        """Print a digest (or save a picture) under a header naming its channel, and note its
        key in the transcript."""
        if (pic := reply.image) is not None:
            posted = await self.upload_image(ref, pic.png, pic.alt, pic.title, pic.filename)
        else:
            text = render(reply)
            if reply.reply_to:  # a post in a thread: indented under the message it answers
                text = f"  ↳ in the thread of {reply.reply_to}\n" + indent(text, "  │ ")
            self.out.write(f"\n=== #{ref.channel_id} ===\n{text}\n")
            self.out.flush()
            posted = f"console:{key}"
        if self.transcript:
            self.transcript.parent.mkdir(parents=True, exist_ok=True)
            with self.transcript.open("a", encoding="utf-8") as f:
                f.write(f"[{key}]\n")
        return posted

    async def find_part(
        self,
        ref: ChannelRef,
        reply: Reply,
        position: int,
        key: str,
        parent: str | None,
        since: str | datetime | None = None,
    ) -> str | None:
        """A digest counts as posted if the transcript has its key."""
        if self.transcript and self.transcript.exists():
            lines = self.transcript.read_text(encoding="utf-8").splitlines()
            return f"console:{key}" if f"[{key}]" in lines else None
        return None

    async def send(self, ref: ChannelRef, reply: Reply) -> None:
        """Print an ordinary message."""
        self.out.write(render(reply) + "\n")
        self.out.flush()

    async def upload_image(
        self, ref: ChannelRef, png: bytes, alt: str, title: str, filename: str = "weekly.png"
    ) -> str:
        """Write the picture to a file named for the channel and print its path and alt text."""
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{ref.channel_id}-{filename}")
        try:
            path = await asyncio.to_thread(write_picture, self.pictures, safe, png)
        except OSError as exc:  # a full or read-only disk: nothing the channel can do about it
            raise PostError(f"could not write {safe}: {exc.strerror}", GONE) from exc
        self.out.write(f"\n=== #{ref.channel_id} ===\n{title}\n{alt}\nPicture: {path}\n")
        self.out.flush()
        return f"console:{path}"


def _read_lines(stdin: TextIO) -> asyncio.Queue[str]:
    """Lines of ``stdin`` as they are typed ('' at EOF), read by a daemon thread.

    A daemon thread, not ``asyncio.to_thread``: a stop (SIGTERM) must not wait for a line that
    may never come, and the event loop's executor would be joined at exit.
    """
    loop, queue = asyncio.get_running_loop(), asyncio.Queue[str]()

    def pump() -> None:
        for line in itertools.chain(iter(stdin.readline, ""), [""]):  # lazily: line by line
            try:
                loop.call_soon_threadsafe(queue.put_nowait, line)
            except RuntimeError:  # the loop has closed: the bot is stopping
                return

    threading.Thread(target=pump, name="console-stdin", daemon=True).start()
    return queue


async def repl(
    handle: Callable[[str], Awaitable[str]],
    prompt: str = "papers> ",
    stdin: TextIO | None = None,
    session: PromptSession | None = None,
) -> None:
    """Read commands until EOF or `exit`; each line is answered by ``handle``.

    At a terminal (or given a ``session``) the prompt is prompt_toolkit's: line editing, Up/Down
    history, and digests printed while it waits appear above it. Pipes and tests read plain lines.
    """
    stdin = stdin or sys.stdin
    if session is None and stdin is sys.stdin and stdin.isatty() and sys.stdout.isatty():
        from prompt_toolkit import PromptSession  # loads only for a terminal

        session = PromptSession()
    if session is not None:
        await _prompted(handle, prompt, session)
        return
    interactive = stdin.isatty()
    lines = _read_lines(stdin)
    while True:
        if interactive:
            sys.stdout.write(prompt)
            sys.stdout.flush()
        line = await lines.get()
        if not line:  # EOF
            return
        if not await _answer(handle, line):
            return


async def _prompted(
    handle: Callable[[str], Awaitable[str]], prompt: str, session: PromptSession
) -> None:
    """The terminal loop: Ctrl-D ends it, Ctrl-C clears the line being typed."""
    from prompt_toolkit.patch_stdout import patch_stdout

    from bot.logs import LogsAbovePrompt

    # Anything printed meanwhile, log lines included, goes above the prompt, which is redrawn.
    with patch_stdout(raw=True), LogsAbovePrompt(sys.stdout):
        while True:
            try:
                line = await session.prompt_async(prompt)
            except EOFError:
                return
            except KeyboardInterrupt:
                continue
            if not await _answer(handle, line):
                return


async def _answer(handle: Callable[[str], Awaitable[str]], line: str) -> bool:
    """Answer one typed line; False when it asks to leave."""
    line = line.strip()
    if line in ("exit", "quit", "/exit", "/quit"):
        return False
    if line:
        sys.stdout.write(await handle(line) + "\n")
        sys.stdout.flush()
    return True
