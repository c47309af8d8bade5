"""Bolt listeners, one register function per feature; each only parses, calls the core, renders."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.deps import Deps
from bot.adapters.slack.access import (
    asks_top,
    is_member,
    note_public,
    visible_channels,
    workspace_admin,
)
from bot.adapters.slack.blocks import MAX_FALLBACK, SlackMessage, cut, escape, render, unescape
from bot.adapters.slack.limits import MAX_VALUE, message_problems
from bot.adapters.slack.listener_errors import guarded
from bot.adapters.slack.poster import degraded
from bot.adapters.slack.uploads import shared_file
from bot.commands import Context, Reply
from bot.commands.core import PUBLIC, Args, _split
from bot.commands.replies import DIGEST_GONE, SEARCH_GONE, Action, error
from digest.errors import DigestError
from digest.models import ChannelRef
from digest.text.headline import shorten

log = logging.getLogger(__name__)
UP, DOWN = {"+1", "thumbsup"}, {"-1", "thumbsdown"}
#: chat.update answers for a message the bot may not (or can no longer) edit.
UNEDITABLE = {
    "message_not_found",
    "cant_update_message",
    "edit_window_closed",
    "channel_not_found",
    "is_archived",
}
PAGED = (
    "stored:"  # a page button's value: a key to a search too long for it (digest/papers/pages.py)
)
VOTE_KEPT = "Your vote is recorded; that message can no longer be updated to show it."


def as_messages(reply: Reply) -> list[SlackMessage]:
    """A reply's messages (an attachment travels separately, as a file: see send_file), each
    checked against Slack's limits as digests are: a response URL that refuses a message answers
    400 and the user sees nothing at all."""
    return [checked(m) for m in render(replace(reply, attachment=None))]


def stored_pages(deps: Deps, reply: Reply) -> Reply:
    """Page buttons whose search is longer than a button value holds (2,000 characters) carry a
    key to it instead, so a long query pages as a short one (blocking: run it in a thread).
    The key lasts a day (digest/papers/pages.py)."""

    pages = deps.pages
    assert pages is not None  # Deps fills it in

    def key(a: Action) -> Action:
        if a.kind != "page" or len(a.value) <= MAX_VALUE:
            return a
        return replace(a, value=f"{PAGED}{pages.keep(a.value)}")

    return replace(reply, actions=tuple(key(a) for a in reply.actions))


def checked(msg: SlackMessage) -> SlackMessage:
    """``msg`` if Slack would take it; else degraded as a digest is; else its text alone."""
    if not (problems := message_problems(msg.blocks, msg.text)):
        return msg
    log.warning("a reply breaks Slack's limits (%s); sending it degraded", problems[0])
    small = degraded(msg)
    if not message_problems(small.blocks, small.text):
        return small
    log.error("a reply breaks Slack's limits even degraded; sending its text only")
    return SlackMessage(cut(msg.text, MAX_FALLBACK) or "digestbot", [], msg.paper_ids)


def channel_ref(team: str, channel: str, user: str) -> ChannelRef:
    """Where a request came from; the user's DM with the app (D…) is their personal digest."""
    if channel.startswith("D"):
        return ChannelRef("slack", f"@{user}", team)
    return ChannelRef("slack", channel, team)


async def _respond(
    respond, reply: Reply, public: bool = False, replace_original: bool = False
) -> None:
    for i, msg in enumerate(as_messages(reply)):
        await respond(
            text=msg.text,
            blocks=msg.blocks,
            response_type="in_channel" if public else "ephemeral",
            replace_original=replace_original and i == 0,
        )


async def send_file(client: AsyncWebClient, reply: Reply, channel: str | None, user: str) -> Reply:
    """Upload the reply's attachment or picture as a file (never inline, where it would be read as
    mrkdwn; a picture with its alt text).

    Into ``channel`` when the reply is public, else into the user's DM with the app; the answer
    says where it went, or why it could not be attached.
    """
    if reply.image is not None:  # a picture (`stats`): PNG bytes with their alt text
        pic = reply.image
        name, upload = pic.filename, {"file": pic.png, "title": pic.title, "alt_txt": pic.alt}
    else:
        name, content = reply.attachment
        upload = {"content": content, "title": name}
    try:
        target = channel or (await client.conversations_open(users=user))["channel"]["id"]
        await client.files_upload_v2(channel=target, filename=name, **upload)
    except (SlackApiError, SlackRequestError) as exc:
        answer = exc.response if isinstance(exc, SlackApiError) else {}
        why = answer.get("error") or "upload failed"
        if why == "missing_scope":  # the app was installed without it: no invitation helps
            needed = answer.get("needed") or "files:write"
            hint = (
                f"the app lacks Slack's `{needed}` scope; a workspace admin adds it by "
                "reinstalling the app from deploy/slack/manifest.yml"
            )
        else:
            hint = f"Slack said: {why}"
        if reply.image is not None:  # the numbers are the answer: they still come, as text
            return replace(reply, text=f"{reply.text}\n⚠ No chart attached: {hint}.", image=None)
        if why == "missing_scope":
            return error(f"Could not attach {name}: {hint}.")
        return error(f"Could not attach {name} ({hint}). Is the app in this channel?")
    where = "here" if channel else "to your direct messages with the app"
    said = f"{reply.text} Sent as {name} {where}."
    return replace(reply, text=said, attachment=None, image=None)


async def _context(
    deps: Deps, client: AsyncWebClient, team: str, channel: str, user: str
) -> Context:
    """The core's view of the caller; admin status is only looked up where it matters."""
    ref = channel_ref(team, channel, user)
    known = await asyncio.to_thread(deps.channels.lookup.get, ref)
    is_admin = True
    if known is not None and known.admin_only:
        is_admin = await workspace_admin(client, user)
    return Context(ref=ref, user=user, is_admin=is_admin, dm=ChannelRef("slack", f"@{user}", team))


@dataclass
class ResponseOutlet:
    """A slash command's answer, through its response URL; a file goes to the channel when the
    answer is public, else to the person's DM with the app."""

    client: AsyncWebClient
    respond: Callable[..., Awaitable[object]]
    channel: str
    user: str
    public: bool

    async def attach(self, reply: Reply) -> Reply:
        return await send_file(self.client, reply, self.channel if self.public else None, self.user)

    async def answer(self, reply: Reply) -> None:
        await _respond(self.respond, reply, public=self.public and not reply.error)

    async def tell(self, text: str) -> None:
        await self.respond(text=text, response_type="ephemeral")


@dataclass
class DirectOutlet:
    """An answer in the person's DM with the app (their message was the command)."""

    client: AsyncWebClient
    where: str  # the DM channel
    user: str

    async def attach(self, reply: Reply) -> Reply:
        return await send_file(self.client, reply, self.where, self.user)

    async def answer(self, reply: Reply) -> None:
        for msg in as_messages(reply):
            await self.client.chat_postMessage(channel=self.where, text=msg.text, blocks=msg.blocks)

    async def tell(self, text: str) -> None:
        await self.client.chat_postMessage(channel=self.where, text=text)


async def handled(
    deps: Deps, client: AsyncWebClient, text: str, ctx: Context, channel: str
) -> Reply:
    """Run a typed command; `import` with nothing pasted takes the file shared here just before."""
    name, personal, rest = _split(text)
    if name != "import" or PUBLIC.sub(" ", rest).strip():
        return await asyncio.to_thread(deps.commands.handle, text, ctx)
    got = await shared_file(client, channel, ctx.user)
    if isinstance(got, Reply):
        return got
    args = Args.typed(file=got)
    reply = await asyncio.to_thread(deps.commands.invoke, "import", ctx, args, personal)
    return replace(reply, public=bool(PUBLIC.search(text))) if not reply.error else reply


def register_commands(app: AsyncApp, deps: Deps) -> None:
    """`/papers`: ack at once, then run the core and answer through the response URL."""

    async def papers(ack, command, respond, client) -> None:
        await ack()
        text = unescape(command.get("text") or "").strip()  # "R&D", not "R&amp;D"
        user, channel = command["user_id"], command["channel_id"]
        ctx = await _context(deps, client, command["team_id"], channel, user)
        place = command.get("channel_name") or ""  # Slack's stand-ins are not names
        place = "" if place in ("directmessage", "privategroup") else place
        ctx = replace(ctx, name=command.get("user_name") or "", place=place)  # who paused, in words
        if asks_top(text):  # counts only the channels this person can see
            team = command["team_id"]
            ctx = replace(ctx, visible=await visible_channels(client, deps.channels, team, user))
        reply = await handled(deps, client, text, ctx, channel)
        if reply.form is not None:  # a private form (Zotero's key): a modal, not a message
            from bot.adapters.slack.zotero import open_form

            await open_form(client, command)
            return
        reply = await asyncio.to_thread(stored_pages, deps, reply)
        public = reply.public and not reply.error  # private unless `--public` was asked for
        await deps.effects.carry_out(reply, ResponseOutlet(client, respond, channel, user, public))
        # Recorded after the answer (only a public channel's 👍 is named in other digests): the
        # Slack call, retried through a 429's Retry-After, must not stand before the reply.
        await note_public(client, deps.channels, ctx.ref)

    app.command("/papers")(guarded(papers))


def _with_counts(blocks: list[dict], paper_id: str, up: int, down: int) -> list[dict]:
    """The message's blocks with this paper's vote buttons showing the counts."""
    out = []
    for b in blocks:
        if b.get("type") == "actions" and b.get("block_id") == cut(f"act:{paper_id}", 255):
            labels = {
                "vote_up": f"👍 {up}" if up else "👍",
                "vote_down": f"👎 {down}" if down else "👎",
            }
            elems = [
                {
                    **e,
                    "text": {
                        **e["text"],
                        "text": labels.get(e.get("action_id"), e["text"]["text"]),
                    },
                }
                for e in b["elements"]
            ]
            b = {**b, "elements": elems}
        out.append(b)
    return out


def voting_for(reply: Reply, channel_id: int) -> Reply:
    """``reply`` with its 👍/👎 buttons naming the digest they vote on: a card shown away from its
    channel (a Home preview lands in the person's DM) still votes where it came from."""

    def tag(a: Action) -> Action:
        return replace(a, value=f"{a.value} {channel_id}") if a.kind in ("up", "down") else a

    cards = tuple(replace(c, actions=tuple(tag(a) for a in c.actions)) for c in reply.cards)
    return replace(reply, cards=cards)


async def _vote_ref(deps: Deps, client: AsyncWebClient, body: dict, target: str) -> ChannelRef:
    """The digest a 👍/👎 votes on: the one the button names (checked), else where it was pressed."""
    team, user, where = body["team"]["id"], body["user"]["id"], body["channel"]["id"]
    if not target:
        return channel_ref(team, where, user)
    ch = await asyncio.to_thread(deps.channels.lookup.by_id, int(target))
    if ch is None or ch.ref.platform != "slack" or ch.ref.workspace != team:
        raise DigestError(DIGEST_GONE)
    personal = ch.ref.personal
    if ch.ref.channel_id != f"@{user}" and (
        personal or not await is_member(client, ch.ref.channel_id, user)
    ):
        raise DigestError("You can only vote on digests of channels you are a member of.")
    return ch.ref


def said(title: str, now: int, elsewhere: str | None) -> str:
    """What one press did, in words (a second press of the same vote withdraws it)."""
    where = f" (for {elsewhere})" if elsewhere else ""
    title = escape(shorten(title, 100))  # Slack reads the text as mrkdwn: no markup from a title
    if now == 0:
        return f"Your vote on “{title}” is withdrawn{where}: pressing the same button again withdraws it."
    mark = "👍" if now > 0 else "👎"
    return f"{mark} recorded for “{title}”{where}; future digests learn from it."


def register_votes(app: AsyncApp, deps: Deps) -> None:
    """👍/👎 buttons (a second click withdraws); the message's counts are updated in place, and a
    card nobody else sees (an ephemeral answer, a Home preview) is told what the press did."""

    async def vote(ack, body, action, client, respond, value: int) -> None:
        await ack()
        where = body["channel"]["id"]
        paper_id, _, target = action["value"].partition(" ")
        if target and not target.isdigit():
            raise DigestError("That button is not a vote any more; nothing was recorded.")
        ref = await _vote_ref(deps, client, body, target)
        now = await asyncio.to_thread(deps.channels.vote, ref, body["user"]["id"], paper_id, value)
        up, down = await asyncio.to_thread(deps.channels.vote_counts, ref, paper_id)
        message = body.get("message")
        private = not message or body.get("container", {}).get("is_ephemeral")
        if private or target or now == 0:  # counts alone would not say whose vote, or where
            paper = await asyncio.to_thread(deps.channels.papers.paper, paper_id)
            mine = ref.personal
            name = ("your personal digest" if mine else f"<#{ref.channel_id}>") if target else None
            text = said(paper.title, now, name)
            await respond(text=text, response_type="ephemeral", replace_original=False)
        if not private:
            blocks = _with_counts(message.get("blocks", []), paper_id, up, down)
            try:
                await client.chat_update(
                    channel=where, ts=message["ts"], text=message.get("text", ""), blocks=blocks
                )
            except SlackApiError as exc:  # deleted, not ours, or too old: the vote still counts
                code = exc.response.get("error")
                if code not in UNEDITABLE:
                    raise
                log.warning("vote recorded; its message cannot show the counts: %s", code)
                await respond(text=VOTE_KEPT, response_type="ephemeral", replace_original=False)
        if now > 0:  # a 👍 others' digests may name: is the channel (still) public? (after the
            await note_public(client, deps.channels, ref)  # answer: nobody waits on Slack's call)

    async def vote_up(ack, body, action, client, respond) -> None:
        await vote(ack, body, action, client, respond, 1)

    async def vote_down(ack, body, action, client, respond) -> None:
        await vote(ack, body, action, client, respond, -1)

    app.action("vote_up")(guarded(vote_up))
    app.action("vote_down")(guarded(vote_down))


def register_actions(app: AsyncApp, deps: Deps) -> None:
    """Buttons: votes, More like this, search pages, links."""
    register_votes(app, deps)

    async def rerun(ack, body, client, respond, text: str, replace_original: bool) -> None:
        await ack()
        ctx = await _context(
            deps, client, body["team"]["id"], body["channel"]["id"], body["user"]["id"]
        )
        if text.startswith(PAGED):
            assert deps.pages is not None  # Deps fills it in
            text = await asyncio.to_thread(deps.pages.recall, text[len(PAGED) :])
            if text is None:
                raise DigestError(SEARCH_GONE)
        reply = await asyncio.to_thread(deps.commands.handle, text, ctx)
        reply = await asyncio.to_thread(stored_pages, deps, reply)
        await _respond(respond, reply, replace_original=replace_original and not reply.error)

    async def more_like(ack, body, action, client, respond) -> None:
        await rerun(ack, body, client, respond, f"similar {action['value']}", False)

    async def page(ack, body, action, client, respond) -> None:
        await rerun(ack, body, client, respond, action["value"], True)

    async def link(ack) -> None:
        await ack()  # link buttons open in the browser; Slack still notifies us

    for action_id, listener in (
        ("more_like", more_like),
        (re.compile(r"^page(_\d+)?$"), page),
        (re.compile(r"^link_"), link),
    ):
        app.action(action_id)(guarded(listener))
