"""Digest and search buttons as DynamicItems: matched by custom_id, so a press on any message,
however old and after any restart, is handled without keeping a View per message in memory."""

from __future__ import annotations

import re

import discord

from bot.adapters.discord.interact import DiscordDeps, apologise, guarded, run, turn_page, vote
from bot.commands.core import Args


def dynamic_buttons(deps: DiscordDeps) -> list[type[discord.ui.DynamicItem]]:
    """Button handlers for 👍/👎, More like this, and search pages."""

    class Vote(
        discord.ui.DynamicItem[discord.ui.Button], template=r"dv:(?P<kind>[ud]):(?P<paper>.+)"
    ):
        def __init__(self, kind: str, paper: str) -> None:
            label = "👍" if kind == "u" else "👎"
            super().__init__(discord.ui.Button(label=label, custom_id=f"dv:{kind}:{paper}"))
            self.kind, self.paper = kind, paper

        @classmethod
        async def from_custom_id(cls, interaction, item, match: re.Match[str]) -> Vote:
            return cls(match["kind"], match["paper"])

        async def callback(self, interaction: discord.Interaction) -> None:
            name = "up" if self.kind == "u" else "down"
            await guarded(interaction, vote(deps, interaction, name, self.paper))

    class More(discord.ui.DynamicItem[discord.ui.Button], template=r"dv:m:(?P<paper>.+)"):
        def __init__(self, paper: str) -> None:
            super().__init__(discord.ui.Button(label="More like this", custom_id=f"dv:m:{paper}"))
            self.paper = paper

        @classmethod
        async def from_custom_id(cls, interaction, item, match: re.Match[str]) -> More:
            return cls(match["paper"])

        async def callback(self, interaction: discord.Interaction) -> None:
            work = run(deps, interaction, "similar", Args.typed(self.paper))
            await guarded(interaction, work)

    class Page(
        discord.ui.DynamicItem[discord.ui.Button],
        template=r"dv:p:(?P<key>[0-9a-f]{16}):(?P<page>\d{1,6})",
    ):
        def __init__(self, key: str, page: int) -> None:
            super().__init__(discord.ui.Button(label="Page", custom_id=f"dv:p:{key}:{page}"))
            self.key, self.page = key, page

        @classmethod
        async def from_custom_id(cls, interaction, item, match: re.Match[str]) -> Page:
            return cls(match["key"], int(match["page"]))

        async def callback(self, interaction: discord.Interaction) -> None:
            await guarded(interaction, turn_page(deps, interaction, self.key, self.page))

    class OldPage(discord.ui.DynamicItem[discord.ui.Button], template=r"dv:p:(?P<text>search .*)"):
        """Page buttons from before searches were stored: say so instead of failing silently."""

        def __init__(self, text: str) -> None:
            super().__init__(discord.ui.Button(label="Page", custom_id=f"dv:p:{text}"[:100]))

        @classmethod
        async def from_custom_id(cls, interaction, item, match: re.Match[str]) -> OldPage:
            return cls(match["text"])

        async def callback(self, interaction: discord.Interaction) -> None:
            await apologise(
                interaction, "This button is from an older search; run `/papers search` again."
            )

    return [Vote, More, Page, OldPage]
