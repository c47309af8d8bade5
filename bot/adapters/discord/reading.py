"""`/reading-group` on Discord: the reading group's commands as their own app command group
(/papers is full: Discord allows 25 subcommands a group), each run as the core's
`reading-group …` or `nominate` with typed values."""

from __future__ import annotations

from typing import Literal

import discord
from discord import app_commands

from bot.adapters.deps import Deps
from bot.adapters.discord.choices import paper_choices
from bot.adapters.discord.interact import run
from bot.commands.core import Args

Choices = list[app_commands.Choice[str]]
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
CONTEXTS = app_commands.AppCommandContext(guild=True, dm_channel=False, private_channel=False)
INSTALLS = app_commands.AppInstallationType(guild=True, user=False)


class ReadingGroupCommands(app_commands.Group):
    """The channel's weekly reading group."""

    def __init__(self, deps: Deps) -> None:
        super().__init__(
            name="reading-group",
            description="This channel's weekly reading group",
            allowed_contexts=CONTEXTS,
            allowed_installs=INSTALLS,
        )
        self.deps = deps

    async def _run(self, i: discord.Interaction, *words: object, name: str = "reading-group"):
        await run(self.deps, i, name, Args.typed(*words))

    @app_commands.command(description="When the group meets and how this week's poll stands")
    async def show(self, i: discord.Interaction) -> None:
        await self._run(i)

    @app_commands.command(name="on", description="Meet every week: a poll, the pick, a thread")
    @app_commands.describe(
        weekday="The meeting's day", time="Its time, e.g. 15:00", timezone="e.g. Europe/Berlin"
    )
    async def switch_on(
        self, i: discord.Interaction, weekday: Weekday, time: str, timezone: str | None = None
    ) -> None:
        await self._run(i, "on", weekday, time, timezone)

    @app_commands.command(name="off", description="Stop the reading group here")
    async def switch_off(self, i: discord.Interaction) -> None:
        await self._run(i, "off")

    @app_commands.command(description="The papers the group read")
    async def history(self, i: discord.Interaction) -> None:
        await self._run(i, "history")

    @app_commands.command(description="BibTeX of the papers the group read")
    async def export(self, i: discord.Interaction) -> None:
        await self._run(i, "export")

    @app_commands.command(description="Put a paper on the next poll")
    @app_commands.describe(paper="Paper id or title")
    async def nominate(self, i: discord.Interaction, paper: str) -> None:
        await self._run(i, paper, name="nominate")

    @app_commands.command(description="Vote in the open poll (its buttons do the same)")
    @app_commands.describe(paper="Paper id")
    async def vote(self, i: discord.Interaction, paper: str) -> None:
        await self._run(i, "vote", paper)

    @nominate.autocomplete("paper")
    async def _papers(self, i: discord.Interaction, current: str) -> Choices:
        return await paper_choices(self.deps, current)
