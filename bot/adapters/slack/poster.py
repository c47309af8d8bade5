"""Posting to Slack through the Web API: the runner's adapter port for the `slack` platform."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.blocks import SlackMessage, render, render_items
from bot.commands.replies import Reply
from bot.ports import Posted, PostError
from digest.models import ChannelRef

log = logging.getLogger(__name__)

#: Errors after which posting to that channel cannot succeed until someone acts.
PERMANENT = {
    "channel_not_found",
    "not_in_channel",
    "is_archived",
    "account_inactive",
    "invalid_auth",
    "token_revoked",
    "not_authed",
    "restricted_action",
    "cannot_dm_bot",
    "user_not_found",
}
METADATA_EVENT = "digestbot_digest"
TRANSPORT = (aiohttp.ClientError, asyncio.TimeoutError)

TokenLookup = Callable[[str], Awaitable[str | None]]


def make_client(
    token: str | None,
    base_url: str | None = None,
    retries: int = 3,
    backoff: float = 0.5,
    timeout: int = 30,
) -> AsyncWebClient:
    """A Web API client that retries 429s (honouring Retry-After) and 5xx answers.

    Dropped connections and timeouts are not retried here: Slack may have posted the message
    already, and the delivery recovery looks it up instead of posting it a second time.
    """
    kwargs = {"base_url": base_url} if base_url else {}
    interval = BackoffRetryIntervalCalculator(backoff_factor=backoff)
    return AsyncWebClient(
        token=token,
        timeout=timeout,
        retry_handlers=[
            AsyncRateLimitErrorRetryHandler(max_retry_count=retries),
            AsyncServerErrorRetryHandler(max_retry_count=retries, interval_calculator=interval),
        ],
        **kwargs,
    )


class SlackPoster:
    """Posts digests and messages, pacing each channel to about one message per second."""

    platform = "slack"

    def __init__(
        self,
        tokens: TokenLookup,
        base_url: str | None = None,
        min_interval: float = 1.0,
        backoff: float = 0.5,
        timeout: int = 30,
    ) -> None:
        self.tokens = tokens
        self.base_url = base_url
        self.min_interval = min_interval
        self.backoff = backoff
        self.timeout = timeout
        self._last: dict[str, float] = {}

    async def client(self, team: str) -> AsyncWebClient:
        """A client with the workspace's bot token (a revoked install has none)."""
        token = await self.tokens(team)
        if not token:
            raise PostError("no Slack installation for this workspace", permanent=True)
        return make_client(token, self.base_url, backoff=self.backoff, timeout=self.timeout)

    async def _channel(self, client: AsyncWebClient, ref: ChannelRef) -> str:
        """The conversation id; `@U123` (a personal digest) opens the user's DM with the app."""
        if not ref.channel_id.startswith("@"):
            return ref.channel_id
        resp = await client.conversations_open(users=ref.channel_id[1:])
        return resp["channel"]["id"]

    async def _pace(self, channel: str) -> None:
        wait = self._last.get(channel, -1e9) + self.min_interval - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        self._last[channel] = time.monotonic()

    async def _post(
        self, client: AsyncWebClient, channel: str, msg: SlackMessage, **extra: object
    ) -> str:
        await self._pace(channel)
        resp = await client.chat_postMessage(
            channel=channel,
            text=msg.text,
            blocks=msg.blocks,
            unfurl_links=False,
            unfurl_media=False,
            **extra,
        )
        return resp["ts"]

    async def post_digest(self, ref: ChannelRef, reply: Reply, key: str) -> Posted:
        """Header first (tagged with the delivery key), then the papers, in a thread if asked."""
        with posting_errors():
            client = await self.client(ref.workspace)
            channel = await self._channel(client, ref)
            metadata = {"event_type": METADATA_EVENT, "event_payload": {"key": key}}
            if reply.threaded:
                parent, items = render_items(reply)
                ts = await self._post(client, channel, parent, metadata=metadata)
                refs = {}
                for item in items:
                    item_ts = await self._post(client, channel, item, thread_ts=ts)
                    refs[item.paper_ids[0]] = f"{channel}:{item_ts}"
                return Posted(f"{channel}:{ts}", refs)
            messages = render(reply)
            first = await self._post(client, channel, messages[0], metadata=metadata)
            for msg in messages[1:]:
                await self._post(client, channel, msg)
            return Posted(f"{channel}:{first}")

    async def find_posted(self, ref: ChannelRef, key: str) -> Posted | None:
        """A digest header carrying ``key`` in its metadata among the channel's recent messages."""
        try:
            client = await self.client(ref.workspace)
            channel = await self._channel(client, ref)
            resp = await client.conversations_history(
                channel=channel, limit=100, include_all_metadata=True
            )
        except SlackApiError as exc:  # cannot tell: the runner must not post again on a guess
            raise PostError(
                f"could not read history: {exc.response.get('error')}", permanent=False
            ) from exc
        except TRANSPORT as exc:
            raise PostError(
                "could not read history: no answer from Slack", permanent=False
            ) from exc
        for msg in resp.get("messages", []):
            meta = msg.get("metadata") or {}
            if (
                meta.get("event_type") == METADATA_EVENT
                and meta.get("event_payload", {}).get("key") == key
            ):
                return Posted(f"{channel}:{msg['ts']}")
        return None

    async def send(self, ref: ChannelRef, reply: Reply) -> None:
        """An ordinary (public) message."""
        with posting_errors():
            client = await self.client(ref.workspace)
            channel = await self._channel(client, ref)
            for msg in render(reply):
                await self._post(client, channel, msg)


@contextmanager
def posting_errors() -> Iterator[None]:
    """Slack's answers as PostErrors: permanent ones pause the channel, the rest are retried."""
    try:
        yield
    except SlackApiError as exc:
        raise _post_error(exc) from exc
    except TRANSPORT as exc:  # no answer: it may or may not have been posted; recovery checks
        raise PostError(f"no answer from Slack ({type(exc).__name__})", permanent=False) from exc


def _post_error(exc: SlackApiError) -> PostError:
    error = str(exc.response.get("error") or exc.response.status_code)
    return PostError(error, permanent=error in PERMANENT)
