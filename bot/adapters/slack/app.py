"""Builds and runs the Slack side: a Bolt AsyncApp (single token or multi-workspace OAuth) in
Socket Mode or HTTP mode, and the poster the runner uses, sharing one installation store."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from sqlalchemy import Engine

from bot.adapters.deps import Deps
from bot.adapters.slack.bolt_middleware import (
    SeenRequests,
    dedup_middleware,
    single_team_middleware,
)
from bot.adapters.slack.events import (
    register_home,
    register_lifecycle,
    register_messages,
    register_reactions,
)
from bot.adapters.slack.http_middleware import guard_middleware
from bot.adapters.slack.listeners import register_actions, register_commands
from bot.adapters.slack.poster import SlackPoster, TokenLookup, make_client
from bot.adapters.slack.reading import register_reading
from bot.adapters.slack.stores import InstallationStore, StateStore
from bot.adapters.slack.zotero import register_zotero
from digest.errors import DigestError

log = logging.getLogger(__name__)
BOT_SCOPES = [
    "commands",
    "chat:write",
    "chat:write.public",
    "im:write",
    "reactions:read",
    "users:read",
    "channels:history",
    "groups:history",
    "im:history",
    "mpim:history",
    "mpim:read",
    "files:write",
    "files:read",
    "channels:read",
    "groups:read",
]


@dataclass
class SlackConfig:
    """The Slack part of the settings, as plain strings."""

    bot_token: str | None = None
    app_token: str | None = None
    signing_secret: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    api_url: str | None = None  # tests point this at a local fake Web API
    host: str = "0.0.0.0"
    port: int = 3000
    scopes: list[str] = field(default_factory=lambda: list(BOT_SCOPES))

    @property
    def enabled(self) -> bool:
        """Slack starts only when a bot token or OAuth credentials are set."""
        return bool(self.bot_token or (self.client_id and self.client_secret))

    @property
    def socket_mode(self) -> bool:
        return bool(self.app_token)

    def check(self) -> None:
        """Refuse a configuration that would start 'healthy' and then fail every request."""
        oauth = bool(self.client_id and self.client_secret)
        if not self.enabled:
            if self.app_token or self.signing_secret or self.client_id or self.client_secret:
                raise DigestError(
                    "Slack settings are incomplete: set DIGESTBOT_SLACK_BOT_TOKEN (one workspace) "
                    "or both DIGESTBOT_SLACK_CLIENT_ID and DIGESTBOT_SLACK_CLIENT_SECRET (OAuth)."
                )
            return
        if not self.signing_secret and not self.socket_mode:
            raise DigestError(
                "Slack needs DIGESTBOT_SLACK_SIGNING_SECRET (HTTP mode) or "
                "DIGESTBOT_SLACK_APP_TOKEN (Socket Mode) besides "
                + ("the OAuth client id and secret." if oauth else "DIGESTBOT_SLACK_BOT_TOKEN.")
            )
        if oauth and not self.signing_secret:
            raise DigestError(
                "Multi-workspace OAuth needs DIGESTBOT_SLACK_SIGNING_SECRET (it serves HTTP)."
            )


@dataclass
class SlackRuntime:
    """The running Slack connection: Bolt app, poster, and how it receives requests."""

    app: AsyncApp
    poster: SlackPoster
    config: SlackConfig
    deps: Deps
    store: InstallationStore | None = None
    _runner: web.AppRunner | None = None
    _socket: AsyncSocketModeHandler | None = None

    @property
    def connected(self) -> bool:
        """Listening for HTTP requests, or connected by Socket Mode."""
        return self._runner is not None or self._socket is not None

    def web_app(self) -> web.Application:
        """The aiohttp application serving /slack/events (and /slack/install, /slack/oauth_redirect)."""
        web_app = self.app.server(path="/slack/events", port=self.config.port).web_app
        web_app.middlewares.append(guard_middleware(self.app, self.config.signing_secret))
        return web_app

    async def start(self) -> None:
        """Connect by Socket Mode, or listen for HTTP requests on the configured port."""
        if self.config.socket_mode:
            self._socket = AsyncSocketModeHandler(self.app, self.config.app_token)
            await self._socket.connect_async()
            log.info("Slack connected (Socket Mode)")
            return
        self._runner = web.AppRunner(self.web_app())
        await self._runner.setup()
        await web.TCPSite(self._runner, self.config.host, self.config.port).start()
        log.info("Slack listening on %s:%s", self.config.host, self.port)

    @property
    def port(self) -> int | None:
        """The port actually bound (port 0 asks the system for a free one), None if not listening."""
        addresses = self._runner.addresses if self._runner is not None else []
        return addresses[0][1] if addresses else None

    async def stop(self) -> None:
        """Disconnect cleanly."""
        if self._socket is not None:
            await self._socket.close_async()
        if self._runner is not None:
            await self._runner.cleanup()


def _oauth_app(
    cfg: SlackConfig, engine: Engine, deps: Deps
) -> tuple[AsyncApp, TokenLookup, InstallationStore]:
    """Multi-workspace: installations (and their bot tokens) come from the database."""
    installs = InstallationStore(cfg.client_id, engine)
    oauth = AsyncOAuthSettings(
        client_id=cfg.client_id,
        client_secret=cfg.client_secret,
        scopes=cfg.scopes,
        installation_store=installs,
        state_store=StateStore(engine),
    )
    app = AsyncApp(
        signing_secret=cfg.signing_secret,
        oauth_settings=oauth,
        client=make_client(None, cfg.api_url),
    )

    async def tokens(team: str) -> str | None:
        bot = await installs.async_find_bot(enterprise_id=None, team_id=team)
        return bot.bot_token if bot else None

    async def forget(team: str) -> None:
        await installs.async_delete_all(enterprise_id=None, team_id=team)

    deps.on_uninstall = forget
    return app, tokens, installs


def _single_app(cfg: SlackConfig) -> tuple[AsyncApp, TokenLookup]:
    """One workspace, one bot token; requests from any other workspace are refused."""
    app = AsyncApp(
        token=cfg.bot_token,
        signing_secret=cfg.signing_secret or "",
        client=make_client(cfg.bot_token, cfg.api_url),
        request_verification_enabled=not cfg.socket_mode,  # Socket Mode has no HTTP to sign
    )
    app.middleware(single_team_middleware())

    async def tokens(team: str) -> str | None:
        return cfg.bot_token

    return app, tokens


def build_slack(cfg: SlackConfig, engine: Engine, deps: Deps) -> SlackRuntime:
    """The Bolt app with every listener registered, and a poster using the same tokens."""
    cfg.check()
    installs = None
    if cfg.client_id and cfg.client_secret:
        app, tokens, installs = _oauth_app(cfg, engine, deps)
    else:
        app, tokens = _single_app(cfg)
    app.middleware(dedup_middleware(SeenRequests(engine)))
    for register in (
        register_commands,
        register_messages,
        register_actions,
        register_zotero,
        register_reading,
        register_reactions,
        register_home,
        register_lifecycle,
    ):
        register(app, deps)
    return SlackRuntime(app, SlackPoster(tokens, cfg.api_url), cfg, deps, installs)
