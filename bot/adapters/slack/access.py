"""Who may see and control a channel's digest from the App Home: one rule for listing and acting.

A user sees their personal digest and the channels they are a member of; workspace admins
see every channel; `admin_only` channels need an admin (or the person who set them up).
"""

from __future__ import annotations

import asyncio
import logging

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from digest.channels.access import may_change
from digest.channels.service import ChannelService
from digest.models import Channel, ChannelRef

log = logging.getLogger(__name__)


async def workspace_admin(client: AsyncWebClient, user: str) -> bool:
    """Whether ``user`` is a workspace admin or owner (users.info)."""
    info = (await client.users_info(user=user))["user"]
    return bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))


async def user_name(client: AsyncWebClient, user: str) -> str:
    """``user``'s Slack handle (as a slash command's ``user_name``), or "" if Slack will not say."""
    try:
        info = (await client.users_info(user=user))["user"]
    except SlackApiError:  # unknown or deactivated user: the caller falls back to the id
        return ""
    return str(info.get("name") or info.get("profile", {}).get("display_name") or "")


async def is_member(client: AsyncWebClient, channel_id: str, user: str) -> bool:
    """Whether ``user`` is in the conversation (every page of conversations.members is read)."""
    try:
        async for page in await client.conversations_members(channel=channel_id, limit=1000):
            if user in page.get("members", []):
                return True
    except SlackApiError:  # channel gone, or private and the app was removed: not shown
        return False
    return False


async def may_manage(client: AsyncWebClient, ch: Channel, user: str, admin: bool) -> bool:
    """The one rule (digest/channels/access.py) for one channel, plus membership, which the Home
    asks Slack about; ``admin`` is the user's workspace-admin status."""
    if not may_change(ch, user, admin):
        return False
    return ch.ref.personal or admin or await is_member(client, ch.ref.channel_id, user)


async def manageable(
    client: AsyncWebClient, channels: ChannelService, team: str, user: str
) -> list[Channel]:
    """The workspace's digests ``user`` may see and control, personal digest first."""
    # This workspace's channels only (one indexed query): App Home is opened while a user waits.
    mine = await asyncio.to_thread(channels.workspace_channels, "slack", team, True)
    admin = await workspace_admin(client, user)
    checks = await asyncio.gather(*(may_manage(client, c, user, admin) for c in mine))
    allowed = [c for c, ok in zip(mine, checks, strict=True) if ok]
    return sorted(allowed, key=lambda c: not c.ref.personal)


async def may_act(client: AsyncWebClient, ch: Channel | None, team: str, user: str) -> bool:
    """Whether a Home button press on ``ch`` by ``user`` of ``team`` may take effect."""
    if ch is None or ch.ref.platform != "slack" or ch.ref.workspace != team:
        return False
    if ch.ref.personal:  # no workspace admin check needed: it is its person's alone
        return may_change(ch, user, False)
    return await may_manage(client, ch, user, await workspace_admin(client, user))


async def is_public(client: AsyncWebClient, channel_id: str) -> bool | None:
    """Whether everyone in the workspace can see a conversation (conversations.info): a private
    channel, a DM, a group DM, or one Slack will not describe is not; None when Slack did not
    answer (nothing learned)."""
    if channel_id.startswith("D"):  # a DM with the app: somebody's personal digest
        return False
    try:
        info = (await client.conversations_info(channel=channel_id))["channel"]
    except SlackApiError as exc:
        if exc.response.status_code == 429 or exc.response.status_code >= 500:
            return None  # Slack did not say: what was recorded stays
        return False  # gone, or private and the app was removed: not known to be public
    except (SlackClientError, aiohttp.ClientError, TimeoutError) as exc:
        log.warning("could not ask Slack whether %s is public: %s", channel_id, exc)
        return None
    return not (info.get("is_private") or info.get("is_im") or info.get("is_mpim"))


async def note_public(client: AsyncWebClient, channels: ChannelService, ref: ChannelRef) -> None:
    """Record whether a digest channel is public, as Slack says now (after a 👍 there: only a
    public channel's 👍 is named in other channels' digests)."""
    if ref.personal or await asyncio.to_thread(channels.lookup.get, ref) is None:
        return  # a personal digest, or no digest here: nothing to record, Slack not asked
    if (public := await is_public(client, ref.channel_id)) is not None:
        await asyncio.to_thread(channels.claim, ref, None, public=public)


async def can_see(client: AsyncWebClient, channel_id: str, user: str) -> bool:
    """Whether ``user`` can see a conversation: a public channel everyone in the workspace can
    open; a private one (or one Slack will not describe) only its members."""
    try:
        info = (await client.conversations_info(channel=channel_id))["channel"]
    except SlackApiError:  # gone, or private and the app was removed: not shown
        return False
    if not (info.get("is_private") or info.get("is_im") or info.get("is_mpim")):
        return True
    return await is_member(client, channel_id, user)


def asks_top(text: str) -> bool:
    """Whether a typed command is `top` (or `me top`): the one that needs what the user sees."""
    words = text.lower().removeprefix("/papers").split()
    return words[1:2] == ["top"] if words[:1] == ["me"] else words[:1] == ["top"]


async def visible_channels(
    client: AsyncWebClient, channels: ChannelService, team: str, user: str
) -> frozenset[str]:
    """Ids of the team's digest channels ``user`` can see (what `top` may count)."""
    mine = await asyncio.to_thread(channels.workspace_channels, "slack", team)
    seen = await asyncio.gather(*(can_see(client, c.ref.channel_id, user) for c in mine))
    return frozenset(c.ref.channel_id for c, ok in zip(mine, seen, strict=True) if ok)
