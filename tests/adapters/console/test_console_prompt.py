"""The console prompt: line editing and history at a terminal, plain lines from a pipe (issue 23).

At a terminal the prompt is prompt_toolkit's (Up recalls the last command instead of printing
`^[[A`; a digest printed while it waits goes above the prompt, which is redrawn: patch_stdout).
The terminal is simulated with prompt_toolkit's own pipe input, typed key by key; without a
terminal (pipes, tests) lines are read plainly, as before.

Breaks that turn this red (each tried): repl() ignoring the session (plain reading: the typed
keys never arrive, and Up is no history); no patch_stdout around the prompt (a digest printed
while waiting does not go through prompt_toolkit's proxy); ConsoleAdapter binding sys.stdout at
construction (its digests bypass the proxy); the plain path dropped (a pipe is not read).
"""

from __future__ import annotations

import asyncio
import io

import pytest
from prompt_toolkit import PromptSession
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from bot.adapters.console import ConsoleAdapter, repl
from bot.commands.replies import Reply
from digest.models import ChannelRef

UP = "\x1b[A"


@pytest.mark.asyncio
async def test_the_terminal_prompt_has_history_and_output_goes_above_it():
    """Typed `list`, then Up + Enter runs `list` again; a digest posted meanwhile is proxied."""
    asked: list[str] = []
    seen_streams: list[object] = []
    console = ConsoleAdapter(transcript=None)  # writes to sys.stdout as it is at that moment

    async def handle(line: str) -> str:
        asked.append(line)
        seen_streams.append(type(console.out).__name__)
        await console.send(ChannelRef("console", "lab"), Reply(text="a digest"))
        return "ok"

    with create_pipe_input() as inp:
        session = PromptSession(input=inp, output=DummyOutput())
        loop = asyncio.create_task(repl(handle, session=session))
        for keys, answered in (("list\r", 1), (UP + "\r", 2), ("exit\r", 2)):
            inp.send_text(keys)  # one line at a time: each waits for the previous answer
            await asyncio.wait_for(_until(lambda n=answered: len(asked) >= n or loop.done()), 10)
        await asyncio.wait_for(loop, 20)
    assert asked == ["list", "list"]
    assert seen_streams == ["StdoutProxy", "StdoutProxy"]


@pytest.mark.asyncio
async def test_a_pipe_is_read_line_by_line(monkeypatch, capsys):
    """No terminal: plain lines, no prompt, `exit` stops; prompt_toolkit is not involved."""
    asked: list[str] = []

    async def handle(line: str) -> str:
        asked.append(line)
        return f"answer to {line}"

    stdin = io.StringIO("list\n\nstats\nexit\nnever\n")
    await asyncio.wait_for(repl(handle, stdin=stdin), 20)
    assert asked == ["list", "stats"]
    out = capsys.readouterr().out
    assert "answer to list" in out and "papers>" not in out


async def _until(ready) -> None:
    """Wait (polling the loop, bounded by the caller's wait_for) until ``ready()``."""
    while not ready():
        await asyncio.sleep(0.01)
