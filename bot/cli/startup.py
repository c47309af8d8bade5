"""Start-up checks for chat platforms: one clear line per platform that cannot log in.

A bad token must neither hang silently nor print a traceback on every reconnect: each platform
is logged in once before it starts; the ones that fail are reported (and named by /healthz),
and the bot carries on with the others, or exits with code 2 when nothing is left to serve.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.app import App

log = logging.getLogger(__name__)
LOGIN_TIMEOUT = 20.0
AUTH_FAILED = 4004  # the gateway's close code for a token it no longer accepts


async def slack_problem(application: App) -> str | None:
    """None when Slack accepts the configured tokens, else why not (checked once, at start)."""
    from slack_sdk.errors import SlackApiError

    cfg = application.settings.slack()
    client = application.slack.app.client
    try:
        async with asyncio.timeout(LOGIN_TIMEOUT):
            if cfg.bot_token:
                await client.auth_test(token=cfg.bot_token)
            if cfg.app_token:
                await client.apps_connections_open(app_token=cfg.app_token)
    except SlackApiError as exc:
        return f"{exc.response.get('error', 'refused')} (check the Slack tokens)"
    except (OSError, TimeoutError) as exc:  # aiohttp's connection errors are OSErrors
        return f"cannot reach Slack: {exc or type(exc).__name__}"
    return None


async def start_discord(application: App) -> asyncio.Task | str:
    """Log in to Discord, then connect in the background; a string says why login failed."""
    import discord

    client = application.discord
    token = application.settings.discord_token.get_secret_value()
    try:
        async with asyncio.timeout(LOGIN_TIMEOUT):
            await client.login(token)
    except discord.LoginFailure as exc:
        await client.close()
        return f"{exc} (check DIGESTBOT_DISCORD_TOKEN)"
    except (discord.HTTPException, OSError, TimeoutError) as exc:
        await client.close()
        return f"cannot reach Discord: {exc or type(exc).__name__}"
    task = asyncio.create_task(client.connect(), name="discord")
    task.add_done_callback(lambda t: _gateway_ended(application, t))
    return task


def _gateway_ended(application: App, task: asyncio.Task) -> None:
    """A connection Discord ended for good (e.g. close 4004 when the token was reset): one error
    line, and /healthz names Discord unhealthy with the reason.

    Not an exit: Slack, the console and other platforms' digests keep running, as when a login
    fails at start-up; and a restart cannot mend a reset token (start-up would refuse it again).
    A supervisor watching /healthz sees it; the log line says what to do.
    """
    if task.cancelled() or (exc := task.exception()) is None:
        return  # stopped by us, or a clean close
    code = getattr(exc, "code", None)
    if code == AUTH_FAILED:
        why = "authentication failed (gateway close 4004): the token was reset or revoked; "
        why += "set a new DIGESTBOT_DISCORD_TOKEN and restart"
    elif code is not None:
        why = f"the gateway closed the connection with code {code} and will not reconnect"
    else:
        why = f"the gateway connection ended: {type(exc).__name__}: {exc}"
    application.failed["discord"] = why
    log.error("Discord stopped: %s", why, extra={"platform": "discord"})


def report(failed: dict[str, str], running: list[str]) -> None:
    """One line per failed platform, and what the bot carries on with."""
    for name, reason in failed.items():
        log.error("%s login failed: %s", name.capitalize(), reason)
    if failed and running:
        log.error("continuing with %s", ", ".join(running))
