"""Posting to Discord through discord.py's HTTP client: the runner's adapter port for `discord`."""

from __future__ import annotations

import asyncio
import hashlib
import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import aiohttp
import discord

from bot.adapters.discord.embeds import DiscordMessage, attachment, cut, render, stamp
from bot.adapters.discord.limits import message_problems
from bot.adapters.outgoing import clean_text
from bot.commands.replies import Reply
from bot.ports import GONE, REJECTED, TRANSIENT, PostError
from digest.models import ChannelRef

log = logging.getLogger(__name__)
NO_MENTIONS = discord.AllowedMentions.none()
TRANSPORT = (aiohttp.ClientError, asyncio.TimeoutError, OSError)
THREAD_EXISTS, UNKNOWN_MESSAGE = 160004, 10008
#: Thread starts refused for the channel, not the message: 50013 Missing Permissions (Create
#: Public Threads), 50024 (no threads in this channel type). The papers then go inline.
NO_THREADS = (50013, 50024)
#: History is read newest first, at most MAX_SCAN messages (100 a request).
MAX_SCAN = 5000
#: Discord's limits: 25 MiB per upload without a boosted server; alt text 1,024 characters.
MAX_ATTACHMENT, MAX_ALT = 25 * 1024 * 1024, 1024


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


def allowed(msg: DiscordMessage) -> discord.AllowedMentions:
    """Whom ``msg`` may ping: exactly the users its content mentions; never @everyone, @here
    or a role; none at all for a message that mentions nobody."""
    if not msg.mentions:
        return NO_MENTIONS
    users = [discord.Object(id=int(u)) for u in msg.mentions]
    return discord.AllowedMentions(everyone=False, roles=False, users=users, replied_user=False)


def payload(msg: DiscordMessage, nonce: str | None = None) -> dict:
    """The JSON body discord.py sends for ``msg`` (what Discord validates)."""
    view = view_for(msg)
    body = {
        "content": msg.content,
        "embeds": [e.to_dict() for e in msg.embeds],
        "components": view.to_components() if view else [],
        "allowed_mentions": allowed(msg).to_dict(),
    }
    return body | ({"nonce": nonce} if nonce else {})


# Codes for a channel that cannot take a digest as configured, with the reason people will read.
UNSENDABLE = {
    50008: "this is a forum or voice channel (Discord 50008); digests need a text channel",
    50024: "threads cannot be started here (Discord 50024); turn them off with "
    "/papers option name:threads on:False",
}


def classify(exc: discord.HTTPException) -> PostError:
    """gone: channel or access lost; rejected: this payload (400); transient: 429, 5xx, others."""
    # One line: discord.py spreads a form error over several, and a pause reason is one line.
    detail = " ".join(f"{exc.status}/{exc.code}: {exc.text or type(exc).__name__}".split())[:200]
    if exc.code == 50008:  # no degraded digest turns a forum into a text channel: pause now
        return PostError(UNSENDABLE[exc.code], GONE)
    if exc.code == 50024:  # degrading drops the thread: the digest is posted inline instead
        return PostError(UNSENDABLE[exc.code], REJECTED)
    if isinstance(exc, discord.Forbidden):  # 50001 Missing Access, 50013, 50007 closed DMs
        return PostError(" ".join(f"missing access: {exc.text or 'forbidden'}".split()), GONE)
    if exc.code == UNKNOWN_MESSAGE:  # the header was deleted: no thread; degrading posts inline
        return PostError("the digest's first message was deleted (Discord 10008)", REJECTED)
    if isinstance(exc, discord.NotFound):  # 10003 Unknown Channel
        return PostError("channel not found (deleted, or the bot was removed)", GONE)
    if exc.status == 400:
        return PostError(f"refused ({detail})", REJECTED)
    retry_after = getattr(exc, "retry_after", None)
    slow = exc.status == 429
    return PostError(
        detail, TRANSIENT, retry_after, rate_limited=slow
    )  # the runner says "Discord error" once


@contextmanager
def posting_errors(prefix: str = "") -> Iterator[None]:
    """Discord's answers (and silence) as PostErrors, classified in one place."""
    try:
        yield
    except discord.HTTPException as exc:
        err = classify(exc)
        raise PostError(
            prefix + err.reason, err.kind, err.retry_after, rate_limited=err.rate_limited
        ) from exc
    except TRANSPORT as exc:  # no answer: it may have been posted; a retry looks it up first
        raise PostError(
            f"{prefix}no answer from Discord ({type(exc).__name__})", TRANSIENT
        ) from exc


def degraded(msg: DiscordMessage) -> DiscordMessage:
    """The same message without what Discord may refuse: link buttons, repeats, long text."""
    rows, seen = [], set()
    for row in msg.rows:
        keep = [
            b
            for b in row
            if b.url is None and b.custom_id not in seen and not seen.add(b.custom_id)
        ]
        if keep:
            rows.append(keep)
    embeds = [discord.Embed.from_dict(e.to_dict()) for e in msg.embeds]
    for e in embeds:
        e.description = cut(e.description or "", 1000) or None
    return DiscordMessage(msg.content, embeds, rows, msg.paper_ids, msg.mentions)


class DiscordPoster:
    """Posts digests as embeds with buttons; header first, papers after (or in a thread)."""

    platform = "discord"

    def __init__(self, client: discord.Client) -> None:
        self.client = client
        # header reference -> its thread is there (True) or cannot be (False): one start each
        self._threads: dict[str, bool] = {}

    async def _target(self, ref: ChannelRef) -> discord.abc.Messageable:
        if ref.personal:  # a personal digest: the user's DMs
            user = await self.client.fetch_user(int(ref.channel_id[1:]))
            return await user.create_dm()
        return self.client.get_partial_messageable(int(ref.channel_id))

    async def _send(
        self, where: discord.abc.Messageable, msg: DiscordMessage, nonce: str | None = None, **extra
    ) -> discord.Message:
        kwargs = {
            "content": msg.content or None,
            "embeds": msg.embeds,
            "allowed_mentions": allowed(msg),
            **extra,
        }
        if nonce is not None:  # with enforce_nonce, Discord answers a repeat with the first message
            kwargs["nonce"] = nonce
        if (view := view_for(msg)) is not None:
            kwargs["view"] = view
        return await where.send(**kwargs)

    def ready(self) -> bool:
        """Logged in (discord.py's HTTP client has its token and the bot's user): posts can go."""
        return self.client.user is not None and not self.client.is_closed()

    def plan(self, reply: Reply) -> list[tuple[str, ...]]:
        """The messages of a digest: header (with papers when short), then five papers a message."""
        return [m.paper_ids for m in self._messages(reply)]

    def _messages(self, reply: Reply) -> list[DiscordMessage]:
        return render(reply, per_message=1, merge=False) if reply.threaded else render(reply)

    async def post_part(
        self,
        ref: ChannelRef,
        reply: Reply,
        position: int,
        key: str,
        parent: str | None,
        degrade: bool = False,
    ) -> str:
        """One planned message, its key at the end of its last footer (and as nonce); validated.

        In a threaded digest the papers go in the header's thread, started once; where the bot
        may not start one (50013, or no threads in this channel: 50024) they go inline instead.
        A picture goes as a message with the file attached; its file name is its key.
        """
        if (pic := reply.image) is not None:
            return await self.upload_image(ref, pic.png, pic.alt, pic.title, pic.filename, key)
        msg = self._messages(reply)[position]
        msg = stamp(degraded(msg) if degrade else msg, key)
        if problems := message_problems(payload(msg, nonce(key))):
            raise PostError(f"refused (invalid form body: {problems[0]})", REJECTED)
        with posting_errors():
            where = await self._target(ref)
            if reply.threaded and position > 0 and parent and not degrade:
                where = await self._thread(parent, reply.title or "Digest") or where
            elif reply.reply_to:  # a reading-group post: in the thread on the announcement
                where = await self._thread(reply.reply_to, reply.title or "Reading group") or where
            sent = await self._send(where, msg, nonce=nonce(key))
        return f"{sent.channel.id}:{sent.id}"

    async def _thread(self, parent: str, title: str) -> discord.abc.Messageable | None:
        """The thread under the header (its id is the header's id), started the first time only;
        None when threads cannot be started here (the papers then go inline)."""
        channel_id, message_id = parent.split(":", 1)
        if parent not in self._threads:
            try:
                await self.client.http.start_thread_with_message(
                    int(channel_id), int(message_id), name=title[:100], auto_archive_duration=1440
                )
            except discord.HTTPException as exc:
                if exc.code in NO_THREADS:
                    log.warning("no thread under %s (Discord %s); posting inline", parent, exc.code)
                    self._threads[parent] = False
                elif exc.code != THREAD_EXISTS:  # 10008: the header was deleted (see classify)
                    raise
            self._threads.setdefault(parent, True)
        if not self._threads[parent]:
            return None
        return self.client.get_partial_messageable(int(message_id))

    async def find_part(
        self,
        ref: ChannelRef,
        reply: Reply,
        position: int,
        key: str,
        parent: str | None,
        since: str | datetime | None = None,
    ) -> str | None:
        """Our message whose last footer ends with ``key``: in the header's thread or the channel.

        Reads newest first back to ``since`` (a message Discord stored before this one: its
        snowflake is Discord's own clock, never the bot host's; a time only for a channel's
        first message); unsure (a transient PostError) when the scan cap is reached first.
        """
        if isinstance(since, datetime):
            after = discord.utils.time_snowflake(since)
        else:
            after = int(since.split(":", 1)[1]) if since else None
        name = reply.image.filename if reply.image is not None else None
        with posting_errors("could not read history: "):
            places = [await self._target(ref)]
            if reply.threaded and position > 0 and parent:  # the thread first; degraded: inline
                places.insert(0, self.client.get_partial_messageable(int(parent.split(":", 1)[1])))
            if reply.reply_to:  # the announcement's thread (its id is the announcement's)
                thread = int(reply.reply_to.split(":", 1)[1])
                places.insert(0, self.client.get_partial_messageable(thread))
            for where in places:
                try:
                    if (found := await self._scan(where, key, after, name)) is not None:
                        return found
                except discord.NotFound:
                    continue  # no thread yet: nothing was posted in it
        return None

    async def _scan(
        self, where: discord.abc.Messageable, key: str, after: int | None, name: str | None
    ) -> str | None:
        """Page through ``where`` newest first (100 a request) for ``key`` (a picture: the
        attached file ``name``, one per channel and week), down to ``after``."""
        seen = 0
        async for m in where.history(limit=MAX_SCAN):
            if after is not None and m.id <= after:
                return None  # older than a message stored before ours: it is not there
            seen += 1
            footer = m.embeds[-1].footer.text if m.embeds else None
            ours = (footer or "").endswith(key) if name is None else _attached(m, name)
            if m.author.id == self.client.user.id and ours:
                return f"{m.channel.id}:{m.id}"
        if seen >= MAX_SCAN:
            raise PostError(
                f"could not read history: over {MAX_SCAN} messages since the digest "
                "was claimed; not re-posting while unsure",
                TRANSIENT,
            )
        return None

    async def latest_ref(self, ref: ChannelRef) -> str | None:
        """The channel's newest message ("channel:snowflake", Discord's clock); None if empty."""
        with posting_errors("could not read history: "):
            where = await self._target(ref)
            async for m in where.history(limit=1):
                return f"{m.channel.id}:{m.id}"
        return None

    async def send(self, ref: ChannelRef, reply: Reply) -> None:
        """An ordinary message (with an export attached when there is one)."""
        try:
            where = await self._target(ref)
            for i, msg in enumerate(render(reply)):
                file = attachment(reply) if i == 0 else None
                await self._send(where, msg, **({"file": file} if file else {}))
        except discord.HTTPException as exc:
            raise classify(exc) from exc
        except TRANSPORT as exc:
            raise PostError(f"no answer from Discord ({type(exc).__name__})", TRANSIENT) from exc

    async def upload_image(
        self,
        ref: ChannelRef,
        png: bytes,
        alt: str,
        title: str,
        filename: str = "weekly.png",
        key: str | None = None,
    ) -> str:
        """A message with the PNG attached (multipart: ``files[0]`` and ``payload_json`` whose
        ``attachments`` give its id, name and alt text as description); "channel:message".
        With a ``key`` (a weekly picture) its nonce too: a repeat is answered with the first."""
        if len(png) > MAX_ATTACHMENT:
            raise PostError(f"refused (the picture is over {MAX_ATTACHMENT} bytes)", REJECTED)
        alt, title = clean_text(alt), clean_text(title)  # a channel's name is the platform's text
        file = discord.File(io.BytesIO(png), filename=filename, description=alt[:MAX_ALT])
        with posting_errors():
            where = await self._target(ref)
            sent = await where.send(
                content=cut(title, 2000),
                file=file,
                allowed_mentions=NO_MENTIONS,
                nonce=nonce(key) if key else None,  # discord.py adds enforce_nonce
            )
        return f"{sent.channel.id}:{sent.id}"


def _attached(message: discord.Message, name: str) -> bool:
    """Whether ``message`` carries a file named ``name``."""
    return any(a.filename == name for a in message.attachments)


def nonce(key: str) -> str:
    """A stable nonce per digest message key (Discord allows 25 characters)."""
    return hashlib.sha1(key.encode()).hexdigest()[:25]
