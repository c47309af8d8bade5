"""`/papers import` on Slack. A slash command carries no file, so the file meant is the newest one
the person shared in the same conversation within the last hour (``files.list``), fetched from
its private URL with the bot token, as Slack requires (without it Slack answers a sign-in page)."""

from __future__ import annotations

import logging
import time
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.downloads import read_capped
from bot.commands.handlers_library import Upload
from bot.commands.replies import Reply, error
from digest.library.entries import MAX_IMPORT_BYTES

log = logging.getLogger(__name__)
#: A file shared longer ago than this is not taken as the one meant.
MAX_AGE = 3600
NO_FILE = (
    "No file of yours shared here in the last hour. Share your .bib, .ris or Zotero .csv export "
    "in this conversation (drag it in and send it), then type `/papers import` again; or paste "
    "arXiv ids, DOIs or links after `/papers import`."
)
NO_SCOPE = (
    "The app may not read files yet (it needs the files:read scope): a workspace admin adds it "
    "from deploy/slack/manifest.yml and reinstalls the app."
)


async def shared_file(client: AsyncWebClient, channel: str, user: str) -> Upload | Reply:
    """The newest file ``user`` shared in ``channel`` within ``MAX_AGE``, or the error to show."""
    try:
        found = await client.files_list(
            channel=channel, user=user, ts_from=str(int(time.time()) - MAX_AGE), count=1
        )
    except SlackApiError as exc:
        code = exc.response.get("error") or "no answer"
        return error(
            NO_SCOPE
            if code == "missing_scope"
            else f"Could not look for your file (Slack said: {code})."
        )
    files = sorted(found.get("files") or [], key=lambda f: -int(f.get("created") or 0))
    if not files:
        return error(NO_FILE)
    return await _fetch(client, files[0])


async def file_by_id(client: AsyncWebClient, file_id: str) -> Upload | Reply:
    """A file sent with a direct message (its event names it): ``files.info``, then its bytes."""
    try:
        info = await client.files_info(file=file_id)
    except SlackApiError as exc:
        code = exc.response.get("error") or "no answer"
        if code == "missing_scope":
            return error(NO_SCOPE)
        return error(f"Could not read that file (Slack said: {code}); send it again.")
    return await _fetch(client, info.get("file") or {})


async def _fetch(client: AsyncWebClient, f: dict) -> Upload | Reply:
    """The bytes of a file object Slack described (its size is checked first)."""
    name, size = str(f.get("name") or "the file"), int(f.get("size") or 0)
    if size > MAX_IMPORT_BYTES:
        return error(
            f"{name} is {size / 1e6:.1f} MB; the limit is {MAX_IMPORT_BYTES / 1e6:.0f} MB."
        )
    url = f.get("url_private_download") or f.get("url_private")
    if not url:
        return error(f"Slack gave no download link for {name}; share it again.")
    if not _slack_host(str(url), client.base_url):  # the bot token goes to Slack only
        log.warning("file download refused: not a Slack host (%s)", urlsplit(str(url)).netloc)
        return error(f"The download link of {name} is not Slack's; share the file again.")
    return await _download(url, client.token or "", name)


#: Where Slack serves private files; the configured Web API host is also trusted (a proxy, or
#: the local fake in tests).
FILE_HOSTS = ("files.slack.com",)


def _slack_host(url: str, api_url: str) -> bool:
    """True when ``url`` is on Slack's file host (https) or on the configured API host."""
    parts, api = urlsplit(url), urlsplit(api_url)
    if parts.scheme == "https" and parts.hostname in FILE_HOSTS:
        return True
    return bool(api.netloc) and (parts.scheme, parts.netloc) == (api.scheme, api.netloc)


async def _download(url: str, token: str, name: str) -> Upload | Reply:
    """The file's bytes; a sign-in page (no or a wrong token), a redirect or an error is refused."""
    headers = {"Authorization": f"Bearer {token}"}
    timeout = aiohttp.ClientTimeout(total=30)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(url, headers=headers, allow_redirects=False) as resp,
        ):
            kind = resp.headers.get("Content-Type", "")
            if resp.status != 200 or kind.startswith("text/html"):
                log.warning("file download refused: HTTP %s (%s)", resp.status, kind or "-")
                return error(f"Slack would not hand over {name} (HTTP {resp.status}). {NO_SCOPE}")
            data = await read_capped(resp, MAX_IMPORT_BYTES)
    except (aiohttp.ClientError, TimeoutError) as exc:
        log.warning("file download failed: %s", type(exc).__name__)
        return error(f"Could not fetch {name} from Slack; try again.")
    if len(data) > MAX_IMPORT_BYTES:
        return error(f"{name} is over the limit of {MAX_IMPORT_BYTES / 1e6:.0f} MB.")
    return Upload(name, data)
