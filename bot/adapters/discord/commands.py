"""`/papers` as Discord app commands: typed options passed to the core as values, `me` as a
subcommand group for the personal digest, autocomplete, and help in Discord's own syntax."""

from __future__ import annotations

from functools import partial
from typing import Literal

import discord
from discord import app_commands

from bot.adapters.deps import Deps
from bot.adapters.discord import choices
from bot.adapters.discord.choices import paper_choices, subscription_choices
from bot.adapters.discord.help import help_reply, localise
from bot.adapters.discord.interact import answer, run, search_args
from bot.adapters.discord.zotero import Action as ZoteroAction
from bot.adapters.discord.zotero import zotero
from bot.commands.core import Args

__all__ = ["Papers", "paper_choices", "subscription_choices"]
Choices = list[app_commands.Choice[str]]
# Server channels and the bot's DM; installed to servers (not as a user app).
CONTEXTS = app_commands.AppCommandContext(guild=True, dm_channel=True, private_channel=False)
INSTALLS = app_commands.AppInstallationType(guild=True, user=False)


class ChannelCommands(app_commands.Group):
    """Commands about one digest: the channel's (in /papers) or the person's own (in /papers me)."""

    def __init__(self, deps: Deps, personal: bool = False, **group: object) -> None:
        super().__init__(**group)
        self.deps, self.personal = deps, personal

    async def invoke(self, i: discord.Interaction, name: str, args: Args, public: bool = False):
        """Run a subcommand with its typed values for this group's digest."""
        await run(self.deps, i, name, args, public=public, personal=self.personal)

    @app_commands.command(description="Follow a topic, an author, or papers like one")
    @app_commands.describe(text="A topic, an author's name, or a paper id", kind="What the text is")
    async def subscribe(
        self, i: discord.Interaction, text: str, kind: Literal["topic", "author", "like"] = "topic"
    ) -> None:
        await self.invoke(i, "subscribe", Args.typed(text, kind=kind))

    @app_commands.command(description="Never post papers that mention a term")
    @app_commands.describe(term="A word or phrase")
    async def exclude(self, i: discord.Interaction, term: str) -> None:
        await self.invoke(i, "exclude", Args.typed(term))

    @app_commands.command(description="Stop following something")
    @app_commands.describe(item="What to stop following (pick one, or 'all')")
    async def unsubscribe(self, i: discord.Interaction, item: str) -> None:
        await self.invoke(i, "unsubscribe", Args.typed(item))

    @unsubscribe.autocomplete("item")
    async def _subscriptions(self, i: discord.Interaction, current: str) -> Choices:
        return await subscription_choices(self.deps, i, current, self.personal)

    @app_commands.command(description="What is followed, the schedule and settings")
    @app_commands.describe(public="Show the answer to the channel")
    async def list(self, i: discord.Interaction, public: bool = False) -> None:
        await self.invoke(i, "list", Args.typed(), public)

    @app_commands.command(description="Post today's digest now, or preview it privately")
    @app_commands.describe(mode="preview: only you see it; now: post it (uses up today's)")
    async def digest(
        self, i: discord.Interaction, mode: Literal["preview", "now"] = "preview"
    ) -> None:
        await self.invoke(i, "digest", Args.typed(mode))

    @app_commands.command(description="When digests arrive")
    @app_commands.describe(
        time="HH:MM, 9am, 9:30pm, noon",
        timezone="IANA name, e.g. Europe/Berlin",
        days="daily, weekdays, weekends or e.g. mon,wed,fri",
    )
    async def schedule(
        self,
        i: discord.Interaction,
        time: str,
        timezone: str | None = None,
        days: str | None = None,
    ) -> None:
        await self.invoke(i, "schedule", Args.typed(time, time=time, timezone=timezone, days=days))

    @schedule.autocomplete("timezone")
    async def _timezones(self, i: discord.Interaction, current: str) -> Choices:
        return choices.timezone_choices(current)

    @schedule.autocomplete("days")
    async def _days(self, i: discord.Interaction, current: str) -> Choices:
        return choices.days_choices(current)

    @app_commands.command(description="Papers per digest")
    @app_commands.describe(n="1 to 25")
    async def size(self, i: discord.Interaction, n: app_commands.Range[int, 1, 25]) -> None:
        await self.invoke(i, "size", Args.typed(n))

    @app_commands.command(description="How strong a match must be to be posted (0-1)")
    @app_commands.describe(value="0 posts every match; 0.3 is a good start")
    async def threshold(
        self, i: discord.Interaction, value: app_commands.Range[float, 0.0, 1.0]
    ) -> None:
        await self.invoke(i, "threshold", Args.typed(value))

    @app_commands.command(description="Stop digests until resumed")
    async def pause(self, i: discord.Interaction) -> None:
        await self.invoke(i, "pause", Args.typed())

    @app_commands.command(description="Restart digests")
    async def resume(self, i: discord.Interaction) -> None:
        await self.invoke(i, "resume", Args.typed())

    @app_commands.command(
        description="Quiet days, admin-only, threads, backlog, weekly picture, 👍 shared in top"
    )
    @app_commands.describe(name="Which option", on="Turn it on or off")
    async def option(
        self,
        i: discord.Interaction,
        name: Literal["quiet", "admin-only", "threads", "backlog", "weekly", "share-votes"],
        on: bool,
    ) -> None:
        await self.invoke(i, "option", Args.typed(name, "on" if on else "off"))

    @app_commands.command(description="Why a paper would (or would not) be posted")
    @app_commands.describe(paper="Paper id or title")
    async def why(self, i: discord.Interaction, paper: str) -> None:
        await self.invoke(i, "why", Args.typed(paper))

    @app_commands.command(description="👍 a paper (the digest buttons do the same)")
    @app_commands.describe(paper="Paper id or title")
    async def up(self, i: discord.Interaction, paper: str) -> None:
        await self.invoke(i, "up", Args.typed(paper))

    @app_commands.command(description="👎 a paper (the digest buttons do the same)")
    @app_commands.describe(paper="Paper id or title")
    async def down(self, i: discord.Interaction, paper: str) -> None:
        await self.invoke(i, "down", Args.typed(paper))

    @why.autocomplete("paper")
    @up.autocomplete("paper")
    @down.autocomplete("paper")
    async def _voted(self, i: discord.Interaction, current: str) -> Choices:
        return await paper_choices(self.deps, current)

    @app_commands.command(description="BibTeX of 👍 papers or of every paper posted")
    @app_commands.describe(which="liked: 👍 papers; all: every paper posted")
    async def export(
        self, i: discord.Interaction, which: Literal["liked", "all"] = "liked"
    ) -> None:
        await self.invoke(i, "export", Args.typed("bibtex", which))

    @app_commands.command(
        name="import", description="Follow papers like your own: a .bib, .ris or Zotero .csv file"
    )
    @app_commands.describe(
        file="A BibTeX, RIS or Zotero CSV export, or a text file of arXiv ids, DOIs or links",
        text="Or arXiv ids, DOIs or arXiv/OpenReview/DOI links, separated by spaces",
    )
    async def import_(
        self, i: discord.Interaction, file: discord.Attachment | None = None, text: str = ""
    ) -> None:
        await run(self.deps, i, "import", Args.typed(text), personal=self.personal, upload=file)

    @app_commands.command(description="Digests, papers and votes so far, with a picture of 8 weeks")
    async def stats(self, i: discord.Interaction) -> None:
        await self.invoke(i, "stats", Args.typed())


class MeCommands(ChannelCommands):
    """/papers me: the personal digest's commands, plus the person's Zotero library."""

    # Short words: every /papers name and description counts toward Discord's 4,000 characters.
    @app_commands.command(description="Your Zotero library")
    @app_commands.describe(action="connect opens a private form")
    async def zotero(self, i: discord.Interaction, action: ZoteroAction = "status") -> None:
        await zotero(self.deps, i, action)

    @app_commands.command(description="Be @'d on picks here")
    async def mention(self, i: discord.Interaction, on: bool | None = None) -> None:
        await self.invoke(i, "mention", Args.typed({None: "", True: "on", False: "off"}[on]))


# As for Papers below: discord.py collects a group's commands from its own class body only.
MeCommands.__discord_app_commands_group_children__ = [
    MeCommands.zotero,
    MeCommands.mention,
    *ChannelCommands.__discord_app_commands_group_children__,
]


class Papers(ChannelCommands):
    """The /papers group: the channel's digest, paper look-ups, and `me` for one's own digest."""

    def __init__(self, deps: Deps) -> None:
        super().__init__(
            deps,
            False,
            name="papers",
            description="Research-paper digests",
            allowed_contexts=CONTEXTS,
            allowed_installs=INSTALLS,
        )
        me = MeCommands(deps, True, name="me", description="Your personal digest, sent by DM")
        self.add_command(me)
        deps.syntax = partial(localise, self)

    @app_commands.command(description="Every command, with its options")
    async def help(self, i: discord.Interaction) -> None:
        await i.response.defer(ephemeral=True, thinking=True)
        await answer(i, help_reply(self))

    @app_commands.command(description="Search every stored paper")
    @app_commands.describe(
        query="Words to search for",
        venue="Venue contains",
        year="Publication year",
        author="Author name contains",
        public="Show the results to the channel",
    )
    async def search(
        self,
        i: discord.Interaction,
        query: str,
        venue: str | None = None,
        year: app_commands.Range[int, 1900, 2100] | None = None,
        author: str | None = None,
        public: bool = False,
    ) -> None:
        spec = {"query": query, "venue": venue, "year": year, "author": author}
        await run(self.deps, i, "search", search_args(spec, 1), public=public, search=spec)

    @app_commands.command(description="Suggested topics mined from the stored papers")
    async def topics(self, i: discord.Interaction) -> None:
        await self.invoke(i, "topics", Args.typed())

    @app_commands.command(description="One paper in full")
    @app_commands.describe(paper="Paper id or title")
    async def paper(self, i: discord.Interaction, paper: str) -> None:
        await self.invoke(i, "paper", Args.typed(paper))

    @app_commands.command(description="Papers like this one")
    @app_commands.describe(paper="Paper id or title")
    async def similar(self, i: discord.Interaction, paper: str) -> None:
        await self.invoke(i, "similar", Args.typed(paper))

    @app_commands.command(description="What colleagues liked: most 👍 in this server's channels")
    @app_commands.describe(
        period="week (default) or month", public="Show the answer to the channel"
    )
    async def top(
        self,
        i: discord.Interaction,
        period: Literal["week", "month"] = "week",
        public: bool = False,
    ) -> None:
        await self.invoke(i, "top", Args.typed(period), public)

    @app_commands.command(description="Save a paper to Zotero")
    @app_commands.describe(paper="Paper id or title")
    async def save(self, i: discord.Interaction, paper: str) -> None:
        await self.invoke(i, "save", Args.typed(paper))

    @paper.autocomplete("paper")
    @similar.autocomplete("paper")
    @save.autocomplete("paper")
    async def _papers(self, i: discord.Interaction, current: str) -> Choices:
        return await paper_choices(self.deps, current)


# discord.py collects a group's commands from its own class body only; /papers has both sets.
Papers.__discord_app_commands_group_children__ = [
    *(m for m in Papers.__dict__.values() if isinstance(m, app_commands.Command)),
    *ChannelCommands.__discord_app_commands_group_children__,
]
