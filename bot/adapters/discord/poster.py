"""Posting to Discord through discord.py's HTTP client: the runner's adapter port for `discord`."""

from __future__ import annotations

import asyncio
import hashlib
import logging

import aiohttp
import discord

from bot.adapters.discord.embeds import DiscordMessage, attachment, render
from bot.commands.replies import Reply
from bot.ports import REJECTED, Posted, PostError
from digest.models import ChannelRef

log = logging.getLogger(__name__)
NO_MENTIONS = discord.AllowedMentions.none()
TRANSPORT = (aiohttp.ClientError, asyncio.TimeoutError, OSError)


def view_for(msg: DiscordMessage) -> discord.ui.View | None:
    """Buttons as a persistent view (no timeout); presses are routed by custom_id after restarts."""
    if not msg.rows:
        return None
    view = discord.ui.View(timeout=None)
    for n, row in enumerate(msg.rows):
        for b in row:
            if b.url:
                view.add_item(discord.ui.Button(label=b.label, url=b.url, row=n))
            else:
                view.add_item(discord.ui.Button(label=b.label, custom_id=b.custom_id, row=n))
    view.stop()  # a finished view is sent but not kept in memory: DynamicItems route the presses
    return view


# Discord's codes for a channel that can never take a digest as configured: pause it, saying why.
UNSENDABLE = {
    50008: "this is a forum or voice channel; digests need a text channel",
    50024: "threads cannot be started here; turn them off with /papers option name:threads on:False",
}


def _error(exc: discord.HTTPException) -> PostError:
    if exc.code in UNSENDABLE:
        return PostError(UNSENDABLE[exc.code], REJECTED)
    if isinstance(exc, discord.Forbidden):
        return PostError(f"missing access: {exc.text or 'forbidden'}", permanent=True)
    if isinstance(exc, discord.NotFound):
        return PostError("channel not found (deleted, or the bot was removed)", permanent=True)
    return PostError(f"Discord error {exc.status}", permanent=False)


class DiscordPoster:
    """Posts digests as embeds with buttons; header first, papers after (or in a thread)."""

    platform = "discord"

    def __init__(self, client: discord.Client) -> None:
        self.client = client

    async def _target(self, ref: ChannelRef) -> discord.abc.Messageable:
        if ref.channel_id.startswith("@"):  # a personal digest: the user's DMs
            user = await self.client.fetch_user(int(ref.channel_id[1:]))
            return await user.create_dm()
        return self.client.get_partial_messageable(int(ref.channel_id))

    async def _send(
        self, where: discord.abc.Messageable, msg: DiscordMessage, nonce: str | None = None, **extra
    ) -> discord.Message:
        kwargs = {
            "content": msg.content or None,
            "embeds": msg.embeds,
            "allowed_mentions": NO_MENTIONS,
            **extra,
        }
        if nonce is not None:  # with enforce_nonce, Discord answers a repeat with the first message
            kwargs["nonce"] = nonce
        if (view := view_for(msg)) is not None:
            kwargs["view"] = view
        return await where.send(**kwargs)

    async def post_digest(self, ref: ChannelRef, reply: Reply, key: str) -> Posted:
        """The delivery key goes in the header's footer, so a crashed send can be found again."""
        messages = render(reply, per_message=1, merge=False) if reply.threaded else render(reply)
        head = messages[0].embeds[0]
        head.set_footer(text=f"{head.footer.text or ''} · {key}".strip(" ·")[:2048])
        try:
            where = await self._target(ref)
            first = await self._send(where, messages[0], nonce=nonce(key, 0))
            refs: dict[str, str] = {}
            if reply.threaded and len(messages) > 1:
                where = await self._thread(first, reply.title or "Digest")
            for n, msg in enumerate(messages[1:], 1):
                sent = await self._send(where, msg, nonce=nonce(key, n))
                if len(msg.paper_ids) == 1:
                    refs[msg.paper_ids[0]] = f"{sent.channel.id}:{sent.id}"
            return Posted(f"{first.channel.id}:{first.id}", refs)
        except discord.HTTPException as exc:
            raise _error(exc) from exc
        except TRANSPORT as exc:  # no answer: it may have been posted; recovery looks it up
            raise PostError(
                f"no answer from Discord ({type(exc).__name__})", permanent=False
            ) from exc

    async def _thread(self, first: discord.Message, title: str) -> discord.abc.Messageable:
        """A thread under the header, started by REST: a partial channel carries no guild."""
        thread = await self.client.http.start_thread_with_message(
            first.channel.id, first.id, name=title[:100], auto_archive_duration=1440
        )
        return self.client.get_partial_messageable(int(thread["id"]))

    async def find_posted(self, ref: ChannelRef, key: str) -> Posted | None:
        """Our recent message whose header footer carries ``key``; PostError if we cannot tell."""
        try:
            where = await self._target(ref)
            async for m in where.history(limit=50):
                mine = m.author.id == self.client.user.id
                if mine and any(key in (e.footer.text or "") for e in m.embeds):
                    return Posted(f"{m.channel.id}:{m.id}")
        except discord.HTTPException as exc:
            raise PostError(f"could not read history: {exc.status}", permanent=False) from exc
        except TRANSPORT as exc:
            raise PostError(
                "could not read history: no answer from Discord", permanent=False
            ) from exc
        return None

    async def send(self, ref: ChannelRef, reply: Reply) -> None:
        """An ordinary message (with an export attached when there is one)."""
        try:
            where = await self._target(ref)
            for i, msg in enumerate(render(reply)):
                file = attachment(reply) if i == 0 else None
                await self._send(where, msg, **({"file": file} if file else {}))
        except discord.HTTPException as exc:
            raise _error(exc) from exc
        except TRANSPORT as exc:
            raise PostError(
                f"no answer from Discord ({type(exc).__name__})", permanent=False
            ) from exc


def nonce(key: str, n: int) -> str:
    """A stable nonce per digest message (Discord allows 25 characters)."""
    return hashlib.sha1(f"{key}:{n}".encode()).hexdigest()[:25]
