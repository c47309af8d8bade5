"""Which Discord channels are public to their server, and which a member may view: what the
digest marks ("👍 in #name", public channels only) and `/papers top` (channels the asker may
view) are decided from, out of what the gateway keeps of a server and what is fetched."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

import discord

if TYPE_CHECKING:
    from digest.channels.service import ChannelService

log = logging.getLogger(__name__)

PLATFORM = "discord"


def channel_in(guild: object, channel_id: int | None) -> object:
    """The guild's cached channel or thread with this id, if the gateway gave it."""
    if guild is None or channel_id is None or not hasattr(guild, "get_channel_or_thread"):
        return None
    return guild.get_channel_or_thread(channel_id)


def everyone_sees(channel: object, guild: object) -> bool | None:
    """Whether @everyone may view ``channel`` of ``guild`` (recorded: only a public channel's 👍
    is named in other channels' digests). A private thread is not public; a public thread is as
    its parent. None when the gateway has not told the bot enough to say (no channel, no guild,
    or no @everyone role known)."""
    if channel is None or guild is None or not hasattr(guild, "get_role"):
        return None
    if isinstance(channel, discord.Thread):
        if channel.type == discord.ChannelType.private_thread:
            return False
        channel = channel.parent
    everyone = guild.get_role(getattr(guild, "id", 0))  # @everyone's id is the guild's
    if channel is None or everyone is None or not hasattr(channel, "permissions_for"):
        return None
    return bool(channel.permissions_for(everyone).view_channel)


#: At most this many of a server's digest channels are fetched for one `top` (each is a request).
MAX_FETCHED = 25


async def uncached_channels(channels: ChannelService, i: discord.Interaction) -> dict[int, object]:
    """The server's digest channels the gateway has not given the bot (an archived thread, a
    channel it has not seen since it connected), fetched over HTTP, so `top` can check them
    like the others; one Discord refuses (gone, or hidden from the bot) is left out."""
    guild = getattr(i, "guild", None)
    if i.guild_id is None or guild is None:
        return {}
    mine = await asyncio.to_thread(channels.workspace_channels, PLATFORM, str(i.guild_id))
    ids = [int(c.ref.channel_id) for c in mine if c.ref.channel_id.isdigit()]
    missing = [c for c in ids if guild.get_channel_or_thread(c) is None][:MAX_FETCHED]
    # Together, not one after another: the member is waiting for `top` (deferred, not answered).
    got = await asyncio.gather(*(_fetch(i.client, cid) for cid in missing))
    return {cid: ch for cid, ch in zip(missing, got, strict=True) if ch is not None}


async def _fetch(client: discord.Client, cid: int) -> object | None:
    try:
        return await client.fetch_channel(cid)
    except discord.HTTPException as exc:  # 404 gone, 403 hidden from the bot: not counted
        log.info("channel %s not counted in top: %s (code %s)", cid, exc.status, exc.code)
        return None


def _may_view(here: object, member: object) -> bool:
    """Whether ``member`` may view a channel or thread; a private thread only with Manage
    Threads (its members are not known here), and anything undecidable is not viewable."""
    try:
        perms = here.permissions_for(member)
    except (discord.ClientException, AttributeError):  # a thread whose parent is unknown
        return False
    if getattr(here, "type", None) == discord.ChannelType.private_thread:
        return bool(perms.view_channel and perms.manage_threads)
    return bool(perms.view_channel)


def visible_channels(
    channels: ChannelService, i: discord.Interaction, fetched: Mapping[int, object] | None = None
) -> frozenset[str]:
    """Ids of this server's digest channels the member who asked may view (blocking: reads the
    store). Decided from what the gateway keeps of the server (channels, roles, overwrites),
    channels fetched for the purpose (``fetched``: uncached_channels) and the member the
    interaction carries; a channel known in neither is not counted."""
    guild, member = getattr(i, "guild", None), getattr(i, "user", None)
    if i.guild_id is None or guild is None or getattr(member, "roles", None) is None:
        return frozenset()
    fetched = fetched or {}
    seen = set()
    for c in channels.workspace_channels(PLATFORM, str(i.guild_id)):
        where = c.ref.channel_id
        here = None
        if where.isdigit():
            here = guild.get_channel_or_thread(int(where)) or fetched.get(int(where))
        if here is not None and _may_view(here, member):
            seen.add(where)
    return frozenset(seen)
