"""Digest and search buttons as DynamicItems: matched by custom_id, so a press on any message,
however old and after any restart, is handled without keeping a View per message in memory."""

from __future__ import annotations

import re

import discord

from bot.adapters.deps import Deps
from bot.adapters.discord.interact import apologise, guarded, run, turn_page, vote, vote_in
from bot.commands.core import Args


def _deps(interaction: discord.Interaction) -> Deps:
    """The client's wiring (DigestClient.deps)."""
    return interaction.client.deps


class Vote(discord.ui.DynamicItem[discord.ui.Button], template=r"dv:(?P<kind>[ud]):(?P<paper>.+)"):
    """👍 / 👎 on a paper: the vote lands on the digest the message belongs to."""

    def __init__(self, kind: str, paper: str) -> None:
        label = "👍" if kind == "u" else "👎"
        super().__init__(discord.ui.Button(label=label, custom_id=f"dv:{kind}:{paper}"))
        self.kind, self.paper = kind, paper

    @classmethod
    async def from_custom_id(cls, interaction, item, match: re.Match[str]) -> Vote:
        return cls(match["kind"], match["paper"])

    async def callback(self, interaction: discord.Interaction) -> None:
        name = "up" if self.kind == "u" else "down"
        await guarded(interaction, vote(_deps(interaction), interaction, name, self.paper))


class ChannelVote(
    discord.ui.DynamicItem[discord.ui.Button],
    template=r"dv:(?P<kind>[ud])@(?P<channel>\d{1,18}):(?P<paper>.+)",
):
    """👍 / 👎 that names its digest: sent away from it (a "which paper?" DM after a reaction)."""

    def __init__(self, kind: str, channel: int, paper: str) -> None:
        label = "👍" if kind == "u" else "👎"
        cid = f"dv:{kind}@{channel}:{paper}"
        super().__init__(discord.ui.Button(label=label, custom_id=cid))
        self.kind, self.channel, self.paper = kind, channel, paper

    @classmethod
    async def from_custom_id(cls, interaction, item, match: re.Match[str]) -> ChannelVote:
        return cls(match["kind"], int(match["channel"]), match["paper"])

    async def callback(self, interaction: discord.Interaction) -> None:
        name = "up" if self.kind == "u" else "down"
        work = vote_in(_deps(interaction), interaction, name, self.paper, self.channel)
        await guarded(interaction, work)


class More(discord.ui.DynamicItem[discord.ui.Button], template=r"dv:m:(?P<paper>.+)"):
    """More like this: similar papers, privately."""

    def __init__(self, paper: str) -> None:
        super().__init__(discord.ui.Button(label="More like this", custom_id=f"dv:m:{paper}"))
        self.paper = paper

    @classmethod
    async def from_custom_id(cls, interaction, item, match: re.Match[str]) -> More:
        return cls(match["paper"])

    async def callback(self, interaction: discord.Interaction) -> None:
        work = run(_deps(interaction), interaction, "similar", Args.typed(self.paper))
        await guarded(interaction, work)


class Page(
    discord.ui.DynamicItem[discord.ui.Button],
    template=r"dv:p:(?P<key>[0-9a-f]{16}):(?P<page>\d{1,6})",
):
    """Next / Prev: the stored search at another page, edited into the same message."""

    def __init__(self, key: str, page: int) -> None:
        super().__init__(discord.ui.Button(label="Page", custom_id=f"dv:p:{key}:{page}"))
        self.key, self.page = key, page

    @classmethod
    async def from_custom_id(cls, interaction, item, match: re.Match[str]) -> Page:
        return cls(match["key"], int(match["page"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        work = turn_page(_deps(interaction), interaction, self.key, self.page)
        await guarded(interaction, work)


class OldPage(discord.ui.DynamicItem[discord.ui.Button], template=r"dv:p:(?P<text>search .*)"):
    """Page buttons from before searches were stored: say so instead of failing silently."""

    def __init__(self, text: str) -> None:
        super().__init__(discord.ui.Button(label="Page", custom_id=f"dv:p:{text}"[:100]))

    @classmethod
    async def from_custom_id(cls, interaction, item, match: re.Match[str]) -> OldPage:
        return cls(match["text"])

    async def callback(self, interaction: discord.Interaction) -> None:
        hint = "This button is from an older search; run `/papers search` again."
        await apologise(interaction, hint)


from bot.adapters.discord.zotero import Save  # noqa: E402 - it imports interact, as these do


class ReadingVote(
    discord.ui.DynamicItem[discord.ui.Button], template=r"dv:g:(?P<poll>\d+) (?P<paper>.+)"
):
    """🗳 Vote for this, on a reading-group poll: the presser's one vote in that poll."""

    def __init__(self, poll: str, paper: str) -> None:
        cid = f"dv:g:{poll} {paper}"[:100]
        super().__init__(discord.ui.Button(label="🗳 Vote for this", custom_id=cid))
        self.poll, self.paper = poll, paper

    @classmethod
    async def from_custom_id(cls, interaction, item, match: re.Match[str]) -> ReadingVote:
        return cls(match["poll"], match["paper"])

    async def callback(self, interaction: discord.Interaction) -> None:
        args = Args.typed("vote", self.paper, self.poll)
        await guarded(interaction, run(_deps(interaction), interaction, "reading-group", args))


BUTTONS: tuple[type[discord.ui.DynamicItem], ...] = (
    Vote,
    ChannelVote,
    More,
    Save,
    ReadingVote,
    Page,
    OldPage,
)
