"""The Discord client: app commands and persistent buttons set up in setup_hook, reactions as votes,
pausing on guild removal, and command sync only on demand or when the command tree changed."""

from __future__ import annotations

import asyncio
import logging

import discord
from discord import app_commands
from discord.gateway import DiscordWebSocket

from bot.adapters.deps import Deps
from bot.adapters.discord import sync
from bot.adapters.discord.buttons import BUTTONS
from bot.adapters.discord.commands import Papers
from bot.adapters.discord.interact import apologise, ask_privately
from bot.adapters.discord.poster import DiscordPoster
from bot.adapters.discord.reading import ReadingGroupCommands
from bot.adapters.discord.visibility import everyone_sees
from bot.commands.reactions import reaction
from digest.errors import DigestError
from digest.models import ChannelRef, Shards

log = logging.getLogger(__name__)
TREE_KEY = sync.TREE_KEY
UP, DOWN = {"👍"}, {"👎"}


def intents() -> discord.Intents:
    """Guilds and reactions only: no privileged message-content or members intent."""
    i = discord.Intents.none()
    i.guilds = True
    i.guild_reactions = True
    i.dm_reactions = True
    return i


class DigestClient(discord.AutoShardedClient):
    """discord.py client wired to the command core; never syncs commands in on_ready.

    Sharded past 2,500 servers: ``shard_ids`` of ``shard_count`` on this replica; both None,
    discord.py asks Discord for the count and runs every shard here. ``leased``: the shards are
    the ones this replica's leases hold (bot/runtime/leases.py), none until ``serve`` names them,
    and they change while it runs (a dead replica's taken over, extras given back)."""

    def __init__(
        self,
        deps: Deps,
        sync_on_change: bool = True,
        shard_ids: list[int] | None = None,
        shard_count: int | None = None,
        leased: bool = False,
    ) -> None:
        if leased:  # none until the leases say; discord.py wants a count with explicit ids
            shard_ids, shard_count = [], shard_count or 1
        self.leased = leased
        self._launched = False  # connect() has launched the shards: serve() connects directly
        self._shard_lock = asyncio.Lock()  # one change of the open shards at a time
        super().__init__(
            intents=intents(),
            allowed_mentions=discord.AllowedMentions.none(),
            shard_ids=shard_ids,
            shard_count=shard_count,
        )
        self.deps = deps
        self.tree = app_commands.CommandTree(self)
        self.tree.add_command(Papers(deps))
        self.tree.add_command(ReadingGroupCommands(deps))
        self.tree.on_error = self.on_command_error
        self.sync_on_change = sync_on_change
        self.poster = DiscordPoster(self)

    async def launch_shards(self) -> None:
        """discord.py's start, but an empty list of leased shards means none (not all of them)."""
        if not self.leased:
            await super().launch_shards()
            return
        async with self._shard_lock:
            ids = sorted(self.shard_ids or [])
            self._connection.shard_count = self.shard_count
            self._connection.shard_ids = ids
            self._launched = True
            for n, shard_id in enumerate(ids):
                await self.launch_shard(DiscordWebSocket.DEFAULT_GATEWAY, shard_id, initial=n == 0)

    def _open_shards(self) -> dict:
        # discord.py keeps its shards in a private, name-mangled dict; AutoShardedClient has no
        # public way to add or drop one while running, which leases need.
        return self._AutoShardedClient__shards  # type: ignore[attr-defined]

    async def serve(self, shards: Shards) -> None:
        """Connect exactly ``shards`` (the ones this replica's leases hold): gateway connections
        of shards no longer held are closed, newly held ones opened; a new shard count closes
        them all and opens the held ones under it (Discord asks every shard to agree on it)."""
        if not self.leased:
            return
        async with self._shard_lock:
            await self._serve(shards)

    async def _serve(self, shards: Shards) -> None:
        ids = sorted(shards.ids)
        open_ = self._open_shards() if self._launched else {}
        if shards.count != self.shard_count:
            for shard_id in list(open_):
                await open_.pop(shard_id).close()
            self.shard_count = self._connection.shard_count = shards.count
        for shard_id in [s for s in open_ if s not in shards.ids]:
            await open_.pop(shard_id).close()
            log.info("Discord shard %d closed here", shard_id, extra={"platform": "discord"})
        self.shard_ids = ids
        self._connection.shard_ids = ids
        if not self._launched or self.is_closed():
            return  # connect() launches them
        for shard_id in [s for s in ids if s not in open_]:
            await self.launch_shard(DiscordWebSocket.DEFAULT_GATEWAY, shard_id)
            log.info("Discord shard %d opened here", shard_id, extra={"platform": "discord"})

    def tree_hash(self) -> str:
        """A fingerprint of the command definitions (what a sync would send)."""
        return sync.tree_hash(self.tree)

    async def on_command_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        """Any failure in a command (a check, a reply Discord refused): log it, tell the user."""
        log.error("Discord command failed", exc_info=error, extra={"platform": "discord"})
        await apologise(interaction)

    async def setup_hook(self) -> None:
        """Persistent buttons first, so presses on old digests work; then sync only if changed."""
        self.add_dynamic_items(*BUTTONS)
        if not self.sync_on_change or await self.sync_if_changed():
            return  # a sync warns about server copies itself
        # `run` with an unchanged tree: still say so when servers see /papers twice
        if warning := await asyncio.to_thread(sync.duplicate_warning, self.deps.channels.notes):
            log.warning(warning, extra={"platform": "discord"})

    async def sync_if_changed(self) -> bool:
        """Global sync when the tree differs from the last one synced (hash kept in the store)."""
        notes = self.deps.channels.notes
        current = self.tree_hash()
        if await asyncio.to_thread(notes.recall, TREE_KEY) == current:
            return False
        try:
            await sync.sync_global(self.tree, notes)
        except DigestError:  # logged by sync.check; the commands registered before stay
            return False
        log.info("Discord commands synced")
        return True

    async def _react(self, payload: discord.RawReactionActionEvent, added: bool) -> None:
        name = str(payload.emoji)
        value = 1 if name in UP else -1 if name in DOWN else 0
        if value == 0 or (self.user and payload.user_id == self.user.id):
            return
        message_ref = f"{payload.channel_id}:{payload.message_id}"
        value = value if added else 0
        user = str(payload.user_id)
        ask = await asyncio.to_thread(
            reaction, self.deps.commands, "discord", user, [message_ref], value
        )
        if ask is not None:  # several papers in that message: ask which one, by DM
            await ask_privately(self, self.deps, payload.user_id, ask)
        elif value > 0 and payload.guild_id is not None:  # a 👍 others' digests may name
            await self._note_public(payload.guild_id, payload.channel_id)

    async def _note_public(self, guild_id: int, channel_id: int) -> None:
        """Record whether a digest channel is public as the gateway says now (a reaction in a
        threaded digest's thread counts for the channel it hangs off)."""
        guild = self.get_guild(guild_id)
        where = guild.get_channel_or_thread(channel_id) if guild is not None else None
        if isinstance(where, discord.Thread) and where.type != discord.ChannelType.private_thread:
            where = where.parent
        if where is None or (public := everyone_sees(where, guild)) is None:
            return
        ref = ChannelRef("discord", str(where.id), str(guild_id))
        await asyncio.to_thread(self.deps.channels.claim, ref, None, public=public)

    async def on_guild_channel_update(
        self, before: discord.abc.GuildChannel, after: discord.abc.GuildChannel
    ) -> None:
        """A channel's permissions changed: a digest channel made private stops being named."""
        await self._note_public(after.guild.id, after.id)

    async def on_guild_role_update(self, before: discord.Role, after: discord.Role) -> None:
        """@everyone's own permissions changed (not a channel's overwrite): every digest channel
        of the server is asked again, so one no longer viewable by all stops being named."""
        if not after.is_default() or before.permissions == after.permissions:
            return
        guild = after.guild
        mine = await asyncio.to_thread(
            self.deps.channels.workspace_channels, "discord", str(guild.id)
        )
        changed = []  # the server's digest channels only, and only those whose answer moved
        for c in mine:
            here = (
                guild.get_channel_or_thread(int(c.ref.channel_id))
                if c.ref.channel_id.isdigit()
                else None
            )
            if (public := everyone_sees(here, guild)) is not None and public != c.public:
                changed.append((c.ref, public))
        if changed:
            await asyncio.to_thread(
                lambda: [
                    self.deps.channels.claim(ref, None, public=public) for ref, public in changed
                ]
            )

    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        await self._react(payload, True)

    async def on_raw_reaction_remove(self, payload: discord.RawReactionActionEvent) -> None:
        await self._react(payload, False)

    async def on_guild_remove(self, guild: discord.Guild) -> None:
        """Removed from a server: pause its channels, keep their data."""
        channels = self.deps.channels

        def pause_server() -> None:  # this server's channels only: one indexed query, not all
            for ch in channels.workspace_channels("discord", str(guild.id), personal=True):
                if not ch.paused:
                    channels.settings.set_paused(
                        ch.ref, True, "the bot was removed from this server"
                    )

        await asyncio.to_thread(pause_server)
        self.deps.effects.schedule_changed()
