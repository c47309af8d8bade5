"""Posting to Slack through the Web API: the runner's adapter port for the `slack` platform."""

from __future__ import annotations

import asyncio
import copy
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.outgoing import clean_text
from bot.adapters.slack.blocks import SlackMessage, cut, render, render_items
from bot.adapters.slack.limits import MAX_MESSAGE_BLOCKS, error_code, message_problems
from bot.commands.replies import Reply
from bot.ports import GONE, REJECTED, TRANSIENT, PostError
from digest.models import ChannelRef

log = logging.getLogger(__name__)

#: Errors after which posting to that channel cannot succeed until someone acts.
GONE_ERRORS = {
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
    # Permissions and channel rules: nothing changes until someone acts.
    "missing_scope",
    "no_permission",
    "access_denied",
    "not_allowed_token_type",
    "token_expired",
    "team_access_not_granted",
    "ekm_access_denied",
    "org_login_required",
    "enterprise_is_restricted",
    "restricted_action_read_only_channel",
    "restricted_action_thread_only_channel",
    "restricted_action_non_threadable_channel",
    "channel_is_archived",
    "team_not_found",
}
#: Errors Slack documents as passing (its side, or too fast): the only ones retried later.
TRANSIENT_ERRORS = {
    "ratelimited",
    "rate_limited",
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
    "team_added_to_org",
}
# Every other error refuses this payload (another payload may pass): degrade it, then pause.
# Slack documents these so: invalid_blocks, invalid_blocks_format, msg_too_long, no_text,
# too_many_attachments, invalid_arguments, invalid_metadata_format, invalid_metadata_schema,
# metadata_too_large, thread_not_found, invalid_thread_ts.
#: What to do about the two errors a channel's own people can fix (shown with the pause reason).
HINTS = {
    "not_in_channel": "the app is not a member of this channel: invite it (`/invite @` and the "
    "app's name), then `/papers resume`",
    "channel_not_found": "Slack cannot find this channel: deleted, or private without the app "
    "in it (invite it, then `/papers resume`)",
}
METADATA_EVENT = "digestbot_digest"
#: History is read in pages of PAGE, at most MAX_PAGES, back to a message Slack stored earlier.
PAGE, MAX_PAGES = 200, 25
TRANSPORT = (aiohttp.ClientError, asyncio.TimeoutError)

TokenLookup = Callable[[str], Awaitable[str | None]]


def make_client(
    token: str | None,
    base_url: str | None = None,
    retries: int = 3,
    backoff: float = 0.5,
    timeout: int = 30,
) -> AsyncWebClient:
    """A Web API client that retries 429s (honouring Retry-After) and 5xx answers; with
    ``retries=0`` one that never sends a request twice (not even after a dropped connection,
    which slack_sdk retries by default): what digests are posted with (see SlackPoster.client).
    """
    kwargs = {"base_url": base_url} if base_url else {}
    interval = BackoffRetryIntervalCalculator(backoff_factor=backoff)
    handlers = [
        AsyncRateLimitErrorRetryHandler(max_retry_count=retries),
        AsyncServerErrorRetryHandler(max_retry_count=retries, interval_calculator=interval),
    ]
    return AsyncWebClient(
        token=token, timeout=timeout, retry_handlers=handlers if retries else [], **kwargs
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
        """A client with the workspace's bot token (a revoked install has none) that sends each
        request once: Slack may have stored a message it answered 5xx for (or whose answer was
        lost), so only the delivery ledger retries, after looking the message up."""
        token = await self.tokens(team)
        if not token:
            raise PostError("no Slack installation for this workspace", GONE)
        return make_client(token, self.base_url, retries=0, timeout=self.timeout)

    async def _channel(self, client: AsyncWebClient, ref: ChannelRef) -> str:
        """The conversation id; `@U123` (a personal digest) opens the user's DM with the app."""
        if not ref.personal:
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

    def plan(self, reply: Reply) -> list[tuple[str, ...]]:
        """The messages of a digest: header (and papers), then more, or one per paper in a thread."""
        return [m.paper_ids for m in self._messages(reply)]

    def _messages(self, reply: Reply) -> list[SlackMessage]:
        if reply.threaded:
            parent, items = render_items(reply)
            return [parent, *items]
        return render(reply)

    async def post_part(
        self,
        ref: ChannelRef,
        reply: Reply,
        position: int,
        key: str,
        parent: str | None,
        degrade: bool = False,
    ) -> str:
        """One planned message, tagged with its key in Slack message metadata; validated first.
        A picture is shared as a file instead: its name (one per channel and week) is its key."""
        if (pic := reply.image) is not None:
            return await self.upload_image(ref, pic.png, pic.alt, pic.title, pic.filename)
        msg = self._messages(reply)[position]
        msg = degraded(msg) if degrade else msg
        if problems := message_problems(msg.blocks, msg.text):  # never send what Slack refuses
            raise PostError(f"{error_code(problems)}: {problems[0]}", REJECTED)
        metadata = {"event_type": METADATA_EVENT, "event_payload": {"key": key}}
        extra: dict = {"metadata": metadata}
        if reply.threaded and position > 0 and parent and not degrade:
            extra["thread_ts"] = parent.split(":", 1)[1]
        elif reply.reply_to:  # a reading-group post in the announcement's thread
            extra["thread_ts"] = reply.reply_to.split(":", 1)[1]
        with posting_errors():
            client = await self.client(ref.workspace)
            channel = await self._channel(client, ref)
            ts = await self._post(client, channel, msg, **extra)
        return f"{channel}:{ts}"

    async def find_part(
        self,
        ref: ChannelRef,
        reply: Reply,
        position: int,
        key: str,
        parent: str | None,
        since: str | datetime | None = None,
    ) -> str | None:
        """The message carrying ``key`` in its metadata: in the channel, or in the header's thread.

        Pages back, newest first, to ``since`` (a message Slack stored before this one: its ts
        is Slack's own clock, so the bot host's clock cannot hide a message; a time only for a
        channel's first message); unsure (a transient PostError) when the scan cap is reached
        before that.
        """
        oldest = _oldest(since)
        if reply.image is not None:
            return await self._find_file(ref, reply.image.filename, oldest)
        with posting_errors("could not read history: "):
            client = await self.client(ref.workspace)
            channel = await self._channel(client, ref)
            pages = [
                lambda cursor: client.conversations_history(
                    channel=channel,
                    limit=PAGE,
                    cursor=cursor,
                    oldest=oldest,
                    include_all_metadata=True,
                )
            ]
            # in the thread (a digest's under its header, or a reading-group post under the
            # announcement it answers), or in the channel when sent degraded
            thread = parent if parent and position > 0 else reply.reply_to
            if thread:
                pages.insert(
                    0,
                    lambda cursor: _replies(
                        client, channel, thread.split(":", 1)[1], cursor, oldest
                    ),
                )
            try:
                for read in pages:
                    if (ts := await _scan(read, key)) is not None:
                        return f"{channel}:{ts}"
            except SlackApiError as exc:
                if exc.response.get("error") != "not_in_channel":
                    raise
                # A public channel posted to through chat:write.public: the app may post but not
                # read. Unknown is not "gone": post again rather than pause a working channel
                # (invite the app for an exact lookup).
                log.warning(
                    "cannot read %s to look for %s (not a member); posting it", channel, key
                )
        return None

    async def _find_file(self, ref: ChannelRef, name: str, oldest: str | None) -> str | None:
        """The picture shared in the channel as ``name`` since ``oldest`` (files.list, newest
        first); unsure (a transient PostError) when a full page holds other files only."""
        with posting_errors("could not read files: "):
            client = await self.client(ref.workspace)
            channel = await self._channel(client, ref)
            got = await client.files_list(
                channel=channel, types="images", ts_from=str(int(float(oldest or 0))), count=PAGE
            )
        files = got.get("files") or []
        if (found := next((f["id"] for f in files if f.get("name") == name), None)) is not None:
            return f"{channel}:{found}"
        if len(files) >= PAGE:
            raise PostError(
                f"could not read files: over {PAGE} files since the picture was claimed; "
                "not sharing it again while unsure",
                TRANSIENT,
            )
        return None

    async def latest_ref(self, ref: ChannelRef) -> str | None:
        """The channel's newest message ("channel:ts", Slack's clock), None when it has none or
        cannot be read (not a member: nothing can be looked up there anyway)."""
        with posting_errors("could not read history: "):
            client = await self.client(ref.workspace)
            channel = await self._channel(client, ref)
            try:
                answer = await client.conversations_history(channel=channel, limit=1)
            except SlackApiError as exc:
                if exc.response.get("error") != "not_in_channel":
                    raise
                return None
            messages = answer.get("messages") or []
            return f"{channel}:{messages[0]['ts']}" if messages else None

    async def send(self, ref: ChannelRef, reply: Reply) -> None:
        """An ordinary (public) message."""
        with posting_errors():
            client = await self.client(ref.workspace)
            channel = await self._channel(client, ref)
            for msg in render(reply):
                await self._post(client, channel, msg)

    async def upload_image(
        self, ref: ChannelRef, png: bytes, alt: str, title: str, filename: str = "weekly.png"
    ) -> str:
        """Share a PNG in the channel: files.getUploadURLExternal (with its alt text), the bytes
        POSTed to the upload URL, then files.completeUploadExternal into the channel with the
        title as its comment (needs the files:write scope). Its reference: "channel:file id".

        Until the last step nothing is shared. When Slack answers the last one 5xx (or not at
        all) it may have shared the file anyway: a transient PostError, and the ledger looks the
        file up by its name (``find_part``) before it uploads it again."""
        alt, title = clean_text(alt), clean_text(title)  # a channel's name is the platform's text
        with posting_errors():
            client = await self.client(ref.workspace)
            channel = await self._channel(client, ref)
            await self._pace(channel)
            got = await client.files_getUploadURLExternal(
                filename=filename, length=len(png), alt_txt=alt
            )
            file_id = str(got["file_id"])
            await _upload_bytes(client, str(got["upload_url"]), png)
            files = [{"id": file_id, "title": title}]
            await client.files_completeUploadExternal(
                files=files, channel_id=channel, initial_comment=title
            )
        return f"{channel}:{file_id}"


async def _upload_bytes(client: AsyncWebClient, url: str, data: bytes) -> None:
    """Step 2: the file's bytes to its upload URL; any failure there shared nothing."""
    timeout = aiohttp.ClientTimeout(total=client.timeout)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as http,
            http.post(url, data=data, proxy=client.proxy, ssl=client.ssl) as resp,
        ):
            status = resp.status
    except TRANSPORT as exc:
        raise PostError(f"the file upload failed ({type(exc).__name__})", TRANSIENT) from exc
    if status != 200:
        raise PostError(f"the file upload failed (HTTP {status})", TRANSIENT)


def _oldest(since: str | datetime | None) -> str | None:
    """Slack's ``oldest`` for a message reference ("channel:ts") or a time."""
    if isinstance(since, datetime):
        return f"{since.timestamp():.6f}"
    return since.split(":", 1)[1] if since else None


async def _replies(
    client: AsyncWebClient, channel: str, ts: str, cursor: str | None, oldest: str | None
) -> dict:
    """One page of a thread; a deleted header has no thread, so nothing was posted in it."""
    try:
        return await client.conversations_replies(
            channel=channel,
            ts=ts,
            limit=PAGE,
            cursor=cursor,
            oldest=oldest,
            include_all_metadata=True,
        )
    except SlackApiError as exc:
        if exc.response.get("error") != "thread_not_found":
            raise
        return {"messages": [], "has_more": False}


def _tagged(msg: dict, key: str) -> bool:
    meta = msg.get("metadata") or {}
    return (
        meta.get("event_type") == METADATA_EVENT and meta.get("event_payload", {}).get("key") == key
    )


async def _scan(read: Callable[[str | None], Awaitable], key: str) -> str | None:
    """The ts of the message tagged ``key``, paging by cursor; None once every page is read."""
    cursor = None
    for _ in range(MAX_PAGES):
        page = await read(cursor)
        if found := next((m["ts"] for m in page.get("messages", []) if _tagged(m, key)), None):
            return found
        cursor = (page.get("response_metadata") or {}).get("next_cursor")
        if not page.get("has_more") or not cursor:
            return None
    raise PostError(
        f"could not read history: over {MAX_PAGES * PAGE} messages since the "
        "digest was claimed; not re-posting while unsure",
        TRANSIENT,
    )


@contextmanager
def posting_errors(prefix: str = "") -> Iterator[None]:
    """Slack's answers as PostErrors, classified here and nowhere else."""
    try:
        yield
    except SlackApiError as exc:
        raise classify(exc, prefix) from exc
    except TRANSPORT as exc:  # no answer: it may or may not have been posted; a retry looks first
        raise PostError(f"{prefix}no answer from Slack ({type(exc).__name__})", TRANSIENT) from exc


def classify(exc: SlackApiError, prefix: str = "") -> PostError:
    """gone: channel/install unusable; transient: Slack's passing errors (429, 5xx and those it
    documents so); rejected: this payload, and any error Slack has not documented as passing
    (retrying it all day changes nothing; the channel is paused with the reason instead)."""
    status = exc.response.status_code
    error = str(exc.response.get("error") or status)
    retry_after = exc.response.headers.get("Retry-After") if exc.response.headers else None
    if error in GONE_ERRORS:
        kind = GONE
    elif error in TRANSIENT_ERRORS or status == 429 or status >= 500:
        kind = TRANSIENT
    else:
        kind = REJECTED
    reason = f"{error} ({HINTS[error]})" if error in HINTS else error
    if error == "missing_scope" and exc.response.get("needed"):  # the app's manifest lacks it
        reason = f"missing_scope: the app needs {exc.response.get('needed')} (reinstall it)"
    slow = status == 429 or error == "ratelimited"
    return PostError(
        prefix + reason, kind, float(retry_after) if retry_after else None, rate_limited=slow
    )


def degraded(msg: SlackMessage) -> SlackMessage:
    """The same message without what Slack may refuse: link buttons, repeated ids, long text."""
    blocks = []
    for block in copy.deepcopy(msg.blocks[:MAX_MESSAGE_BLOCKS]):
        if block.get("type") == "actions":
            seen: set[str] = set()
            block["elements"] = [
                e
                for e in block.get("elements", [])
                if "url" not in e
                and not (e.get("action_id") in seen or seen.add(e.get("action_id")))
            ]
            if not block["elements"]:
                continue
        if block.get("type") == "section" and "text" in block:
            block["text"]["text"] = cut(
                re.sub(r"<([^|>]+)\|([^>]+)>", r"\2", block["text"]["text"]), 2000
            )
        blocks.append(block)
    return SlackMessage(cut(msg.text, 2000), blocks, msg.paper_ids)
