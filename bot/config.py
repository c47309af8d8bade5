"""One settings object, read once from the environment (prefix DIGESTBOT_) and an optional .env."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from platformdirs import user_data_dir
from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

if TYPE_CHECKING:
    from bot.adapters.slack.app import SlackConfig


def default_database_url() -> str:
    """SQLite file in the per-user data directory."""
    folder = Path(user_data_dir("digestbot", appauthor=False))
    return f"sqlite:///{folder / 'digestbot.db'}"


class Settings(BaseSettings):
    """Everything the composition root needs; secrets are SecretStr so they never print."""

    model_config = SettingsConfigDict(env_prefix="DIGESTBOT_", env_file=".env", extra="ignore")

    database_url: str = ""
    index_dir: str = ""
    log_level: str = "WARNING"
    default_timezone: str = "UTC"
    catchup_grace_hours: float = 12.0
    delivery_lease_seconds: float = 120.0  # a claim lapses this long after its owner went quiet
    delivery_sweep_seconds: float = 60.0  # how often due retries and lapsed claims are resumed
    delivery_backoff_seconds: list[float] = [60.0, 300.0, 900.0, 3600.0]
    arxiv_base_url: str = "https://export.arxiv.org/api/query"
    arxiv_rss_url: str = "https://rss.arxiv.org/rss"
    openreview_base_url: str = "https://api2.openreview.net"
    arxiv_queries: list[str] = []
    openreview_venues: list[str] = []
    slack_bot_token: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_client_id: str | None = None
    slack_client_secret: SecretStr | None = None
    health_host: str = "127.0.0.1"
    health_port: int = 8080  # /healthz and /metrics; 0 turns them off
    log_format: str = "text"  # or "json"
    slack_api_url: str | None = None  # only for tests and proxies; Slack's own URL otherwise
    slack_host: str = "0.0.0.0"
    slack_port: int = 3000
    discord_token: SecretStr | None = None

    def resolved_database_url(self) -> str:
        """The configured URL, or the per-user SQLite default."""
        return self.database_url or default_database_url()

    def slack(self) -> SlackConfig:
        """The Slack settings as plain values (secrets revealed only here, to build clients)."""
        from bot.adapters.slack.app import SlackConfig

        def reveal(v: SecretStr | None) -> str | None:
            return v.get_secret_value() if v is not None else None

        return SlackConfig(
            bot_token=reveal(self.slack_bot_token),
            app_token=reveal(self.slack_app_token),
            signing_secret=reveal(self.slack_signing_secret),
            client_id=self.slack_client_id,
            client_secret=reveal(self.slack_client_secret),
            api_url=self.slack_api_url,
            host=self.slack_host,
            port=self.slack_port,
        )

    def resolved_index_dir(self) -> Path:
        """Where fitted ranking indexes are cached."""
        if self.index_dir:
            return Path(self.index_dir)
        return Path(user_data_dir("digestbot", appauthor=False)) / "index"
