"""Running the command core for a Discord interaction: who and where, typed arguments in,
replies out (errors included), and the stored searches behind page buttons."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, replace

import aiohttp
import discord

from bot.adapters.deps import Deps
from bot.adapters.discord.embeds import DiscordMessage, attachment, cut, render, render_paged
from bot.adapters.discord.limits import message_problems
from bot.adapters.discord.poster import NO_MENTIONS, degraded, payload, view_for
from bot.adapters.discord.visibility import (
    PLATFORM,
    channel_in,
    everyone_sees,
    uncached_channels,
    visible_channels,
)
from bot.adapters.downloads import read_capped
from bot.commands import Context, Reply
from bot.commands.core import Args
from bot.commands.handlers_library import Upload
from bot.commands.replies import DIGEST_GONE, SEARCH_GONE, error
from digest.library.entries import MAX_IMPORT_BYTES
from digest.models import ChannelRef

log = logging.getLogger(__name__)
SEARCH_PAGE = 4  # a message holds five rows of buttons: four papers' links and the pager
SORRY = "Something went wrong sending the answer; the error was logged. Please try again."
EXPIRED_TOKEN = 50027  # Invalid Webhook Token: an interaction's token lasts 15 minutes
LATE = "That took longer than Discord keeps an answer open (15 minutes); please ask again."


def context(deps: Deps, i: discord.Interaction) -> Context:
    """The core's view of who pressed or typed (reads the store: call it in a worker thread).

    In a server, Manage Channels counts as channel admin. In the bot's DM every command is about
    the person's own personal digest, the same one `/papers me` reaches from any server.
    """
    user, name = str(i.user.id), i.user.display_name  # the name says who paused a channel
    personal = deps.channels.personal_ref(PLATFORM, user)
    if i.guild_id is None:
        return Context(ref=personal, user=user, dm=personal, personal=True, name=name)
    perms = getattr(i, "permissions", None)
    owner = _owning_channel(deps, i)
    ref = ChannelRef(PLATFORM, str(owner), str(i.guild_id))
    admin = bool(perms and perms.manage_channels)
    # titles show #lab, not the id (a thread's own name is not its channel's)
    here = getattr(i, "channel", None)
    place = str(getattr(here, "name", None) or "") if owner == i.channel_id else ""
    guild = getattr(i, "guild", None)
    owning = here if owner == i.channel_id else channel_in(guild, owner)
    return Context(
        ref=ref,
        user=user,
        is_admin=admin,
        dm=personal,
        name=name,
        place=place,
        public=everyone_sees(owning, guild),
    )


def _owning_channel(deps: Deps, i: discord.Interaction) -> int | None:
    """The channel a command is about: a thread's parent (where the subscription lives, e.g. for a
    digest's own thread), else the channel it was typed in. A forum post stays its own channel
    (a forum holds no digests), and so does a thread that was set up as one before."""
    thread = getattr(i, "channel", None)
    if not isinstance(thread, discord.Thread) or thread.parent_id is None:
        return i.channel_id
    if isinstance(thread.parent, discord.ForumChannel):
        return i.channel_id
    own = deps.channels.lookup.get(ChannelRef(PLATFORM, str(i.channel_id), str(i.guild_id)))
    if own is not None and deps.channels.lookup.subscriptions(own.id):
        return i.channel_id
    return thread.parent_id


def invoke(
    deps: Deps,
    i: discord.Interaction,
    name: str,
    args: Args,
    personal: bool = False,
    ref: ChannelRef | None = None,
    fetched: Mapping[int, object] | None = None,
    shared: bool = False,
) -> Reply:
    """The core's typed entry point for this interaction (blocking: run it in a thread);
    ``fetched``: channels the gateway did not give, for `top` (uncached_channels); ``shared``:
    the answer is posted for the whole channel (public:True)."""
    ctx = replace(context(deps, i), shared=shared)
    if ref is not None and ref != ctx.ref:  # what is known of where it was typed is not of ref
        ctx = replace(ctx, ref=ref, place="", public=None)
    if name == "top":  # counts only the channels this member may view
        ctx = replace(ctx, visible=visible_channels(deps.channels, i, fetched))
    reply = deps.commands.invoke(name, ctx, args, personal)
    return replace(reply, text=deps.syntax(reply.text))


def _sends(reply: Reply) -> list[dict]:
    """The keyword arguments of each message a reply takes (embeds, buttons, the attachment)."""
    paged = any(a.kind == "page" for a in reply.actions)
    out = []
    for n, msg in enumerate(render_paged(reply) if paged else render(reply)):
        msg = checked(msg)
        kwargs = {"embeds": msg.embeds, "allowed_mentions": NO_MENTIONS}
        if (view := view_for(msg)) is not None:
            kwargs["view"] = view
        if n == 0 and (file := attachment(reply)) is not None:
            kwargs["file"] = file
        out.append(kwargs)
    return out


def checked(msg: DiscordMessage) -> DiscordMessage:
    """``msg`` if Discord would take it; else degraded as a digest is; else its text alone
    (a follow-up Discord refuses with 50035 fails the same way on every retry)."""
    if not (problems := message_problems(payload(msg))):
        return msg
    log.warning(
        "a reply breaks Discord's limits (%s); sending it degraded",
        problems[0],
        extra={"platform": PLATFORM},
    )
    small = degraded(msg)
    if not message_problems(payload(small)):
        return small
    log.error(
        "a reply breaks Discord's limits even degraded; sending its text only",
        extra={"platform": PLATFORM},
    )
    text = cut(msg.content or (msg.embeds[0].description if msg.embeds else "") or "", 2000)
    return DiscordMessage(text or "(empty answer)", [], [], msg.paper_ids)


async def answer(i: discord.Interaction, reply: Reply, public: bool = False) -> None:
    """Send a reply as follow-ups to a deferred interaction; private unless asked otherwise.

    The first follow-up takes the place of the deferral's "thinking…" message and keeps its
    visibility, whatever it asks: an error after a public deferral removes that message first,
    so the error is a new message only its asker sees."""
    if public and reply.error:
        await i.delete_original_response()
    for kwargs in _sends(reply):
        await i.followup.send(**kwargs, ephemeral=not public or reply.error)


async def too_late(i: discord.Interaction, reply: Reply, public: bool) -> None:
    """The interaction's token expired: a public answer goes to the channel, a private one to
    the person's DMs (as the bot, which needs no token); a failure here is logged, not raised."""
    where = "the channel" if public else "a direct message"
    log.warning(
        "answered after the interaction's 15 minutes; sending it to %s",
        where,
        extra={"platform": PLATFORM},
    )
    try:
        target = i.channel if public and i.channel is not None else await i.user.create_dm()
        for kwargs in _sends(reply):
            await target.send(**kwargs)
    except discord.HTTPException as exc:
        log.warning("could not send the late answer either: %s (code %s)", exc.status, exc.code)


async def run(
    deps: Deps,
    i: discord.Interaction,
    name: str,
    args: Args,
    *,
    public: bool = False,
    personal: bool = False,
    search: dict | None = None,
    upload: discord.Attachment | None = None,
) -> Reply:
    """Defer (work may take longer than Discord's 3 s), fetch an attached file, run the core,
    answer, apply effects."""
    public = public or args.asks_public  # `--public` typed into a text option: the core drops it
    await i.response.defer(ephemeral=not public, thinking=True)
    got = await fetch_upload(upload) if upload is not None else None
    if isinstance(got, Reply):
        reply = got
    else:
        args = replace(args, options={**args.options, "file": got}) if got else args
        fetched = (
            await uncached_channels(deps.channels, i) if name == "top" and not personal else None
        )
        reply = await asyncio.to_thread(
            invoke, deps, i, name, args, personal, None, fetched, public
        )
    if name == "subscribe" and not personal and not reply.error and (gap := cannot_post(i)):
        reply = replace(reply, text=f"{reply.text}\n⚠ {gap}")
    if search is not None:
        reply = await asyncio.to_thread(with_pager, deps, reply, search)
    return await deps.effects.carry_out(reply, InteractionOutlet(i, public))


@dataclass
class InteractionOutlet:
    """An interaction's answer: follow-ups to its deferral, or past the token's 15 minutes (a
    digest posted now may take that long) the channel or the person's DMs."""

    i: discord.Interaction
    public: bool

    async def attach(self, reply: Reply) -> Reply:
        return reply  # the file goes with the answer's first message (see _sends)

    async def answer(self, reply: Reply) -> None:
        shown = self.public and not reply.error
        await guarded(self.i, answer(self.i, reply, self.public), reply, shown)

    async def tell(self, text: str) -> None:
        sent = self.i.followup.send(content=text, ephemeral=True, allowed_mentions=NO_MENTIONS)
        await guarded(self.i, sent, Reply(text=text))


async def fetch_upload(file: discord.Attachment) -> Upload | Reply:
    """An attached file's bytes from Discord's CDN (the size is checked first), or the error."""
    if file.size > MAX_IMPORT_BYTES:
        mb = MAX_IMPORT_BYTES / 1e6
        return error(f"{file.filename} is {file.size / 1e6:.1f} MB; the limit is {mb:.0f} MB.")
    try:
        data = await _read_capped(file.url, MAX_IMPORT_BYTES)
    except (aiohttp.ClientError, TimeoutError) as exc:
        log.warning("could not fetch an attachment: %s", exc, extra={"platform": PLATFORM})
        return error(f"Could not fetch {file.filename} from Discord; attach it again.")
    if len(data) > MAX_IMPORT_BYTES:  # the size Discord stated was wrong: never trusted alone
        return error(f"{file.filename} is over the limit of {MAX_IMPORT_BYTES / 1e6:.0f} MB.")
    return Upload(file.filename, data)


async def _read_capped(url: str, limit: int) -> bytes:
    """At most ``limit`` + 1 bytes from the CDN (streamed, so a huge file is never held whole);
    an HTTP error status raises aiohttp.ClientResponseError."""
    timeout = aiohttp.ClientTimeout(total=30)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.get(url, raise_for_status=True) as resp,
    ):
        return await read_capped(resp, limit)


def cannot_post(i: discord.Interaction) -> str | None:
    """Why the bot's digests could not arrive where this command was typed, from the
    permissions Discord sends with it; None when they can (or in a DM, or when unknown)."""
    perms = getattr(i, "app_permissions", None)
    if i.guild_id is None or not isinstance(perms, discord.Permissions):
        return None
    thread = isinstance(getattr(i, "channel", None), discord.Thread)
    send = perms.send_messages_in_threads if thread else perms.send_messages
    missing = [
        n
        for n, ok in (
            ("View Channel", perms.view_channel),
            ("Send Messages", send),
            ("Embed Links", perms.embed_links),
        )
        if not ok
    ]
    if not missing:
        return None
    return (
        f"I lack {', '.join(missing)} here, so digests cannot be posted in this channel: a server "
        "admin can give me those permissions (channel settings → Permissions)."
    )


async def guarded(
    i: discord.Interaction, work: Awaitable[object], late: Reply | None = None, public: bool = False
) -> None:
    """Await ``work``; if it fails, log it and tell the user privately instead of going silent.
    Past the token's 15 minutes, ``late`` (or a short note) is sent without the token instead."""
    try:
        await work
    except Exception as exc:  # noqa: BLE001 - whatever broke, the user must hear about it
        if isinstance(exc, discord.HTTPException) and exc.code == EXPIRED_TOKEN:
            await too_late(i, late or Reply(text=LATE), public)  # not a bug: no traceback
            return
        log.exception("Discord reply failed", extra={"platform": PLATFORM})
        await apologise(i)


async def apologise(i: discord.Interaction, text: str = SORRY) -> None:
    """A short private error for the person who asked; logged if even that fails."""
    try:
        if i.response.is_done():
            await i.followup.send(content=text, ephemeral=True, allowed_mentions=NO_MENTIONS)
        else:
            await i.response.send_message(text, ephemeral=True, allowed_mentions=NO_MENTIONS)
    except discord.HTTPException as exc:
        log.warning("could not send the error reply either: %s", exc.status)


def search_args(spec: dict, page: int) -> Args:
    """A stored search (query and filters, as typed) at one page."""
    filters = {k: spec.get(k) for k in ("venue", "year", "author")}
    return Args.typed(spec["query"], filters=filters, page=page, per_page=SEARCH_PAGE)


def with_pager(deps: Deps, reply: Reply, spec: dict) -> Reply:
    """Page buttons carry a short key to the stored search, so no search is too long to page."""
    if not any(a.kind == "page" for a in reply.actions):
        return reply
    assert deps.pages is not None  # Deps fills it in
    key = deps.pages.keep(json.dumps(spec, sort_keys=True))  # kept a day (digest/papers/pages.py)
    actions = tuple(
        replace(a, value=f"{key}:{a.page}") if a.kind == "page" else a for a in reply.actions
    )
    return replace(reply, actions=actions)


async def turn_page(deps: Deps, i: discord.Interaction, key: str, page: int) -> None:
    """Next/Prev: the same search at another page, edited into the same message."""
    await i.response.defer()  # acknowledge now; the edit follows
    assert deps.pages is not None  # Deps fills it in
    blob = await asyncio.to_thread(deps.pages.recall, key)
    if blob is None:
        await apologise(i, SEARCH_GONE)
        return
    spec = json.loads(blob)
    reply = await asyncio.to_thread(invoke, deps, i, "search", search_args(spec, page))
    if reply.error:
        await answer(i, reply)
        return
    reply = await asyncio.to_thread(with_pager, deps, reply, spec)
    msg = checked(render_paged(reply)[-1])  # the text before it was sent with the first page
    await i.edit_original_response(
        embeds=msg.embeds, view=view_for(msg), allowed_mentions=NO_MENTIONS
    )


def vote_target(deps: Deps, i: discord.Interaction, paper: str) -> ChannelRef:
    """The channel whose digest a pressed 👍/👎 belongs to (blocking: run it in a thread).

    A digest message we recorded maps to its channel; else a channel that receives digests
    itself (e.g. a forum post subscribed as a channel); else a DM means the person's personal
    digest and a thread the channel it was started in.
    """
    channels = deps.channels
    message = getattr(i, "message", None)
    if message is not None:
        found = channels.history.item_for_message(PLATFORM, f"{i.channel_id}:{message.id}")
        if found is not None and found[1] == paper and (ch := channels.lookup.by_id(found[0])):
            return ch.ref
    if i.guild_id is None:
        return deps.channels.personal_ref(PLATFORM, str(i.user.id))
    here = ChannelRef(PLATFORM, str(i.channel_id), str(i.guild_id))
    if (own := channels.lookup.get(here)) is not None and channels.history.count(own.id):
        return here
    parent = getattr(i.channel, "parent_id", None)
    return ChannelRef(PLATFORM, str(parent), here.workspace) if parent else here


async def vote(deps: Deps, i: discord.Interaction, name: str, paper: str) -> None:
    """A 👍/👎 button: the vote lands on the delivery the message belongs to."""
    await i.response.defer(ephemeral=True, thinking=True)
    ref = await asyncio.to_thread(vote_target, deps, i, paper)
    reply = await asyncio.to_thread(invoke, deps, i, name, Args.typed(paper), False, ref)
    await answer(i, reply)


async def vote_in(
    deps: Deps, i: discord.Interaction, name: str, paper: str, channel_id: int
) -> None:
    """A 👍/👎 button naming its digest (sent in a DM after a reaction): the vote lands there."""
    await i.response.defer(ephemeral=True, thinking=True)
    ch = await asyncio.to_thread(deps.channels.lookup.by_id, channel_id)
    if ch is None or ch.ref.platform != PLATFORM:
        await answer(i, error(DIGEST_GONE))
        return
    reply = await asyncio.to_thread(invoke, deps, i, name, Args.typed(paper), False, ch.ref)
    await answer(i, reply)


async def ask_privately(client: discord.Client, deps: Deps, user_id: int, reply: Reply) -> None:
    """Send ``reply`` to one person by direct message (no interaction to answer privately: a
    reaction); closed DMs and other refusals are logged, never raised."""
    try:
        dm = await client.create_dm(discord.Object(user_id))
        for kwargs in _sends(replace(reply, text=deps.syntax(reply.text))):
            await dm.send(**kwargs)
    except discord.HTTPException as exc:
        log.warning(
            "could not ask %s by DM: %s (code %s)",
            user_id,
            exc.status,
            exc.code,
            extra={"platform": PLATFORM},
        )
