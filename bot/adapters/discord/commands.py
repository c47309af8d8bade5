"""`/papers` as Discord app commands: typed options that build the core's command text, autocomplete,
and dynamic buttons; every callback only parses, calls the core and renders."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

import discord
from discord import app_commands

from bot.adapters.discord.embeds import attachment, render
from bot.adapters.discord.poster import NO_MENTIONS, view_for
from bot.commands import Commands, Context, Reply
from digest.channels import ChannelService
from digest.models import ChannelRef


@dataclass
class DiscordDeps:
    """What the callbacks need from the composition root."""

    commands: Commands
    channels: ChannelService
    deliver_now: Callable[[ChannelRef], Awaitable[str]] | None = None
    on_schedule_change: Callable[[], None] = lambda: None


def context(i: discord.Interaction) -> Context:
    """The core's view of who pressed or typed: Manage Channels counts as channel admin."""
    guild = str(i.guild_id or "dm")
    ref = ChannelRef("discord", str(i.channel_id), guild)
    perms = getattr(i, "permissions", None)
    return Context(ref=ref, user=str(i.user.id), is_admin=bool(perms and perms.manage_channels),
                   dm=ChannelRef("discord", f"@{i.user.id}", guild))  # fmt: skip


async def answer(i: discord.Interaction, reply: Reply, public: bool = False) -> None:
    """Send a reply as follow-ups to a deferred interaction; private unless asked otherwise."""
    for n, msg in enumerate(render(reply)):
        kwargs = {
            "embeds": msg.embeds,
            "ephemeral": not public or reply.error,
            "allowed_mentions": NO_MENTIONS,
        }
        if (view := view_for(msg)) is not None:
            kwargs["view"] = view
        if n == 0 and (file := attachment(reply)) is not None:
            kwargs["file"] = file
        await i.followup.send(**kwargs)


async def run(deps: DiscordDeps, i: discord.Interaction, text: str, public: bool = False) -> Reply:
    """Defer (work may take longer than Discord's 3 s), run the core, answer, apply effects."""
    await i.response.defer(ephemeral=not public, thinking=True)
    ctx = context(i)
    reply = await asyncio.to_thread(deps.commands.handle, text, ctx)
    await answer(i, reply, public)
    if reply.schedule_changed is not None:
        deps.on_schedule_change()
    if reply.deliver_now is not None and deps.deliver_now is not None:
        outcome = await deps.deliver_now(reply.deliver_now)
        await i.followup.send(
            content=f"Today's digest: {outcome}.", ephemeral=True, allowed_mentions=NO_MENTIONS
        )
    return reply


def _opt(name: str, value: object) -> str:
    """A filter like `author:"Ada Lovelace"` for the core's parser."""
    return f' {name}:"{value}"' if value not in (None, "") else ""


class Papers(app_commands.Group):
    """The /papers group; settings changes are checked by the core (Manage Channels by default)."""

    def __init__(self, deps: DiscordDeps) -> None:
        super().__init__(name="papers", description="Research-paper digests for this channel")
        self.deps = deps

    @app_commands.command(description="Every command")
    async def help(self, i: discord.Interaction) -> None:
        await run(self.deps, i, "help")

    @app_commands.command(description="Search every stored paper")
    @app_commands.describe(query="Words to search for", venue="Venue contains", year="Publication year",
                           author="Author name contains", public="Show the results to the channel")  # fmt: skip
    async def search(self, i: discord.Interaction, query: str, venue: str | None = None,
                     year: app_commands.Range[int, 1900, 2100] | None = None, author: str | None = None,
                     public: bool = False) -> None:  # fmt: skip
        await run(
            self.deps,
            i,
            f"search {query}{_opt('venue', venue)}{_opt('year', year)}{_opt('author', author)}",
            public,
        )

    @app_commands.command(description="Follow a topic, an author, or papers like one")
    @app_commands.describe(text="A topic, an author's name, or a paper id", kind="What the text is")
    async def subscribe(
        self, i: discord.Interaction, text: str, kind: Literal["topic", "author", "like"] = "topic"
    ) -> None:
        await run(self.deps, i, f"subscribe {'' if kind == 'topic' else kind + ':'}{text}")

    @app_commands.command(description="Never post papers that mention a term")
    async def exclude(self, i: discord.Interaction, term: str) -> None:
        await run(self.deps, i, f"exclude {term}")

    @app_commands.command(description="Stop following something")
    @app_commands.describe(item="What to stop following (or 'all')")
    async def unsubscribe(self, i: discord.Interaction, item: str) -> None:
        await run(self.deps, i, f"unsubscribe {item}")

    @unsubscribe.autocomplete("item")
    async def _subscriptions(
        self, i: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await subscription_choices(self.deps, i, current)

    @app_commands.command(description="What this channel follows, its schedule and settings")
    async def list(self, i: discord.Interaction, public: bool = False) -> None:
        await run(self.deps, i, "list", public)

    @app_commands.command(description="Suggested topics mined from the stored papers")
    async def topics(self, i: discord.Interaction) -> None:
        await run(self.deps, i, "topics")

    @app_commands.command(description="Post today's digest now, or preview it privately")
    async def digest(
        self, i: discord.Interaction, mode: Literal["preview", "now"] = "preview"
    ) -> None:
        await run(self.deps, i, f"digest {mode}")

    @app_commands.command(description="When digests arrive")
    @app_commands.describe(time="HH:MM, 24-hour", timezone="IANA name, e.g. Europe/Berlin",
                           days="daily, weekdays, weekends or e.g. mon,wed,fri")  # fmt: skip
    async def schedule(
        self,
        i: discord.Interaction,
        time: str,
        timezone: str | None = None,
        days: str | None = None,
    ) -> None:
        await run(self.deps, i, " ".join(x for x in ("schedule", time, timezone, days) if x))

    @app_commands.command(description="Papers per digest")
    async def size(self, i: discord.Interaction, n: app_commands.Range[int, 1, 25]) -> None:
        await run(self.deps, i, f"size {n}")

    @app_commands.command(description="How strong a match must be to be posted (0-1)")
    async def threshold(
        self, i: discord.Interaction, value: app_commands.Range[float, 0.0, 1.0]
    ) -> None:
        await run(self.deps, i, f"threshold {value}")

    @app_commands.command(description="Stop digests until resumed")
    async def pause(self, i: discord.Interaction) -> None:
        await run(self.deps, i, "pause")

    @app_commands.command(description="Restart digests")
    async def resume(self, i: discord.Interaction) -> None:
        await run(self.deps, i, "resume")

    @app_commands.command(description="Channel options")
    async def option(
        self, i: discord.Interaction, name: Literal["quiet", "admin-only", "threads"], on: bool
    ) -> None:
        await run(self.deps, i, f"option {name} {'on' if on else 'off'}")

    @app_commands.command(description="One paper in full")
    async def paper(self, i: discord.Interaction, paper: str) -> None:
        await run(self.deps, i, f"paper {paper}")

    @app_commands.command(description="Papers like this one")
    async def similar(self, i: discord.Interaction, paper: str) -> None:
        await run(self.deps, i, f"similar {paper}")

    @app_commands.command(description="Why a paper would (or would not) reach this channel")
    async def why(self, i: discord.Interaction, paper: str) -> None:
        await run(self.deps, i, f"why {paper}")

    @paper.autocomplete("paper")
    @similar.autocomplete("paper")
    @why.autocomplete("paper")
    async def _papers(self, i: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return await paper_choices(self.deps, current)

    @app_commands.command(description="👍 a paper (the digest buttons do the same)")
    async def up(self, i: discord.Interaction, paper: str) -> None:
        await run(self.deps, i, f"up {paper}")

    @app_commands.command(description="👎 a paper")
    async def down(self, i: discord.Interaction, paper: str) -> None:
        await run(self.deps, i, f"down {paper}")

    @app_commands.command(description="BibTeX of 👍 papers or of every paper posted here")
    async def export(
        self, i: discord.Interaction, which: Literal["liked", "all"] = "liked"
    ) -> None:
        await run(self.deps, i, f"export bibtex {which}")

    @app_commands.command(description="Digests, papers and votes so far")
    async def stats(self, i: discord.Interaction) -> None:
        await run(self.deps, i, "stats")

    @app_commands.command(
        description="The same commands for your personal digest by DM, e.g. 'subscribe RLHF'"
    )
    async def me(self, i: discord.Interaction, command: str) -> None:
        await run(self.deps, i, f"me {command}")


async def subscription_choices(
    deps: DiscordDeps, i: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    """The channel's subscriptions matching what was typed so far."""
    subs = await asyncio.to_thread(deps.channels.subscriptions, context(i).ref)
    names = [s.text if s.kind.value == "topic" else f"{s.kind.value}:{s.text}" for s in subs] + [
        "all"
    ]
    return [
        app_commands.Choice(name=n[:100], value=n[:100])
        for n in names
        if current.lower() in n.lower()
    ][:25]


async def paper_choices(deps: DiscordDeps, current: str) -> list[app_commands.Choice[str]]:
    """Papers whose id or title matches what was typed: the id is sent, the title is shown."""
    if len(current.strip()) < 2:
        return []
    exact = await asyncio.to_thread(deps.channels.store.papers.get, current.strip())
    view = await asyncio.to_thread(deps.channels.papers.search, current, None, 1, 10)
    found = ([exact] if exact else []) + [
        view.papers[h.paper_id] for h in view.result.hits if h.paper_id in view.papers
    ]
    seen, out = set(), []
    for p in found:
        if p.id not in seen and len(p.id) <= 100:
            seen.add(p.id)
            out.append(app_commands.Choice(name=f"{p.title[:80]} ({p.id})"[:100], value=p.id))
    return out[:25]


def dynamic_buttons(deps: DiscordDeps) -> list[type[discord.ui.DynamicItem]]:
    """Button handlers matched by custom_id, so presses on old digests work after a restart."""

    class Vote(
        discord.ui.DynamicItem[discord.ui.Button], template=r"dv:(?P<kind>[ud]):(?P<paper>.+)"
    ):
        def __init__(self, kind: str, paper: str) -> None:
            super().__init__(
                discord.ui.Button(
                    label="👍" if kind == "u" else "👎", custom_id=f"dv:{kind}:{paper}"
                )
            )
            self.kind, self.paper = kind, paper

        @classmethod
        async def from_custom_id(cls, interaction, item, match: re.Match[str]) -> Vote:
            return cls(match["kind"], match["paper"])

        async def callback(self, interaction: discord.Interaction) -> None:
            await run(deps, interaction, f"{'up' if self.kind == 'u' else 'down'} {self.paper}")

    class More(discord.ui.DynamicItem[discord.ui.Button], template=r"dv:m:(?P<paper>.+)"):
        def __init__(self, paper: str) -> None:
            super().__init__(discord.ui.Button(label="More like this", custom_id=f"dv:m:{paper}"))
            self.paper = paper

        @classmethod
        async def from_custom_id(cls, interaction, item, match: re.Match[str]) -> More:
            return cls(match["paper"])

        async def callback(self, interaction: discord.Interaction) -> None:
            await run(deps, interaction, f"similar {self.paper}")

    class Page(discord.ui.DynamicItem[discord.ui.Button], template=r"dv:p:(?P<command>.+)"):
        def __init__(self, command: str) -> None:
            super().__init__(discord.ui.Button(label="Page", custom_id=f"dv:p:{command}"[:100]))
            self.command = command

        @classmethod
        async def from_custom_id(cls, interaction, item, match: re.Match[str]) -> Page:
            return cls(match["command"])

        async def callback(self, interaction: discord.Interaction) -> None:
            reply = await asyncio.to_thread(
                deps.commands.handle, self.command, context(interaction)
            )
            (first, *_) = render(reply)
            await interaction.response.edit_message(embeds=first.embeds, view=view_for(first))

    return [Vote, More, Page]
