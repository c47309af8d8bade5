"""Help and hints in Discord's syntax: `/papers option name:quiet on:True`, read off the command
tree itself, so they always show the options a user will actually see."""

from __future__ import annotations

import re

import discord
from discord import app_commands

from bot.commands.replies import Reply

SPAN = re.compile(r"`(/papers [^`\n]*)`")
DROPPED = {"export": {"bibtex"}}  # words of the text syntax that Discord's options make implicit
#: Commands Discord has under their own group (/papers is full: 25 subcommands a group at most).
ELSEWHERE = {
    "/papers reading-group": "/reading-group",
    "/papers nominate": "/reading-group nominate",
}
GREEDY = {"search", "subscribe", "exclude", "unsubscribe"}  # first option is free text


def usage(cmd: app_commands.Command) -> str:
    """`/papers search query: [venue:] ...`: required options bare, optional ones in brackets."""
    opts = [f"{p.name}:" if p.required else f"[{p.name}:]" for p in cmd.parameters]
    return "`" + " ".join([f"/{cmd.qualified_name}", *opts]) + "`"


def help_reply(group: app_commands.Group) -> Reply:
    """Every /papers command with its real options; `me` summarised once."""
    lines, me = [], None
    for cmd in group.commands:
        if isinstance(cmd, app_commands.Group):
            me = cmd
        else:
            lines.append(f"{usage(cmd)} — {cmd.description}")
    if me is not None:
        names = ", ".join(c.name for c in me.commands)
        lines.append(f"`/papers me <command>` — {me.description}: {names}.")
    lines.append("In a direct message with the bot, every command is about your personal digest.")
    return Reply(text="\n".join(lines), title="digestbot commands")


def _value(param: app_commands.Parameter, word: str) -> str:
    if param.type is discord.AppCommandOptionType.boolean and word in ("on", "off"):
        return "True" if word == "on" else "False"
    return word


def _command(
    group: app_commands.Group, words: list[str]
) -> tuple[app_commands.Command, list[str]] | None:
    node: app_commands.Command | app_commands.Group = group
    while isinstance(node, app_commands.Group) and words:
        node = node.get_command(words[0]) or node
        if node.name != words[0]:
            return None
        words = words[1:]
    return (node, words) if isinstance(node, app_commands.Command) else None


def _option(param: app_commands.Parameter, word: str) -> str:
    """`name:value`, keeping the text syntax's [brackets] for optional parts."""
    inner = word.strip("[]")
    text = f"{param.name}:{_value(param, inner)}"
    return f"[{text}]" if word.startswith("[") else text


def discord_syntax(group: app_commands.Group, command: str) -> str:
    """One text-syntax command (e.g. `/papers option quiet on`) with Discord's option names."""
    found = _command(group, command.split()[1:])
    if found is None:
        return command
    cmd, words = found
    names = {p.name for p in cmd.parameters}
    words = [w for w in words if w not in DROPPED.get(cmd.name, ())]
    named = [w for w in words if ":" in w and w.strip("[]").partition(":")[0] in names]
    free = [w for w in words if w not in named]
    if cmd.name == "subscribe" and free and free[0].partition(":")[0] in ("author", "like"):
        kind, _, rest = free.pop(0).partition(":")
        free[:0], named = [rest], [*named, f"kind:{kind}"]
    if cmd.name in GREEDY and free:  # the first option is free text: it takes every word
        free = [" ".join(free)]
    given = {n.strip("[]").partition(":")[0] for n in named}
    params = [p for p in cmd.parameters if p.name not in given]
    out = [_option(p, w) for p, w in zip(params, free, strict=False)]
    return " ".join([f"/{cmd.qualified_name}", *out, *free[len(params) :], *named])


def localise(group: app_commands.Group, text: str) -> str:
    """Every `/papers ...` hint in a reply, rewritten in Discord's syntax."""
    for typed, command in ELSEWHERE.items():
        text = text.replace(f"`{typed}", f"`{command}")
    return SPAN.sub(lambda m: f"`{discord_syntax(group, m.group(1))}`", text)
