"""One settings object, read once from the environment (prefix DIGESTBOT_) and an optional .env."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from platformdirs import user_data_dir
from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict, SettingsError

from digest.clock.zones import parse_timezone
from digest.errors import DigestError
from digest.text.files import read_text_file

if TYPE_CHECKING:
    from bot.adapters.slack.app import SlackConfig
    from digest.models import Shards
    from digest.tldr.llm import LlmConfig

log = logging.getLogger(__name__)


def default_database_url() -> str:
    """SQLite file in the per-user data directory."""
    folder = Path(user_data_dir("digestbot", appauthor=False))
    return f"sqlite:///{folder / 'digestbot.db'}"


LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# Upper bounds keep every duration finite and convertible to timers and timestamps (1e999 is inf).
MAX_GRACE_HOURS = 168
MAX_SECONDS = 86400
MAX_LLM_SECONDS = 600
SEMANTIC = ("auto", "on", "off", "1", "0", "true", "false", "yes", "no")


def _json_list_of(value: Any, ok: Callable[[Any], bool], what: str) -> Any:
    """A variable typed as a JSON list whose every item is ``ok``; else the error naming ``what``
    (the caller's FORMS entry says the form expected). A value not typed as text passes as is."""
    if not isinstance(value, str):
        return value
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = None
    if not isinstance(parsed, list) or not all(ok(x) for x in parsed):
        raise ValueError(f"not a JSON list of {what}")
    return parsed


#: What each checked variable must look like, said in every error about it.
FORMS = {
    "catchup_grace_hours": f"a number of hours from 0 to {MAX_GRACE_HOURS} (e.g. 12)",
    "delivery_lease_seconds": f"a number of seconds above 0, at most {MAX_SECONDS} (e.g. 120)",
    "delivery_sweep_seconds": f"a number of seconds above 0, at most {MAX_SECONDS} (e.g. 60)",
    "weekly_sweep_seconds": f"a number of seconds above 0, at most {MAX_SECONDS} (e.g. 600)",
    "reading_sweep_seconds": f"a number of seconds above 0, at most {MAX_SECONDS} (e.g. 60)",
    "delivery_backoff_seconds": (
        f"a JSON list of seconds above 0, each at most {MAX_SECONDS}, e.g. [60, 300, 900, 3600]"
    ),
    "semantic": "auto, on or off (true/false, yes/no, 1/0 also work)",
    "tldr": "stored (the stored abstractive line when a paper has one) or extractive",
    "arxiv_queries": 'a JSON list of strings, e.g. ["cat:cs.LG"]',
    "openreview_venues": 'a JSON list of strings, e.g. ["NeurIPS.cc/2026/Conference"]',
    "health_port": "a whole number from 0 to 65535",
    "slack_port": "a whole number from 0 to 65535",
    "discord_shard_count": "a whole number of shards, at least 1 (e.g. 4)",
    "discord_shard_ids": (
        "a comma list of this replica's shard ids, each below DIGESTBOT_DISCORD_SHARD_COUNT, "
        "no repeats (e.g. 0,1)"
    ),
    "log_level": "one of " + ", ".join(LEVELS),
    "log_format": "text or json",
    "default_timezone": "an IANA time zone such as Europe/Berlin",
    "llm_url": "an http(s) URL of an OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1",
    "llm_timeout_seconds": f"a number of seconds above 0, at most {MAX_LLM_SECONDS} (e.g. 20)",
    "llm_per_run": "a whole number of calls, 0 or more (e.g. 50)",
    "llm_per_day": "a whole number of calls, 0 or more (e.g. 500)",
}


class Settings(BaseSettings):
    """Everything the composition root needs; secrets are SecretStr so they never print."""

    # A blank variable (DIGESTBOT_DISCORD_TOKEN= in .env.example) means unset: off, or the default.
    model_config = SettingsConfigDict(
        env_prefix="DIGESTBOT_", env_file=".env", extra="ignore", env_ignore_empty=True
    )

    database_url: str = ""
    index_dir: str = ""
    log_level: str = "WARNING"
    default_timezone: str = "UTC"
    catchup_grace_hours: float = Field(12.0, ge=0, le=MAX_GRACE_HOURS, allow_inf_nan=False)
    # a claim lapses this long after its owner went quiet
    delivery_lease_seconds: float = Field(120.0, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    # how often due retries and lapsed claims are resumed
    delivery_sweep_seconds: float = Field(60.0, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    # how often owed weekly pictures are looked for (lapsed ones resume with the delivery sweep)
    weekly_sweep_seconds: float = Field(600.0, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    # how often the reading groups' owed posts are looked for (polls, picks, reminders, recaps)
    reading_sweep_seconds: float = Field(60.0, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    delivery_backoff_seconds: Annotated[
        list[Annotated[float, Field(gt=0, le=MAX_SECONDS, allow_inf_nan=False)]],
        NoDecode,
        Field(min_length=1),
    ] = [60.0, 300.0, 900.0, 3600.0]
    arxiv_base_url: str = "https://export.arxiv.org/api/query"
    arxiv_rss_url: str = "https://rss.arxiv.org/rss"
    openreview_base_url: str = "https://api2.openreview.net"
    arxiv_queries: Annotated[list[str], NoDecode] = []
    openreview_venues: Annotated[list[str], NoDecode] = []
    slack_bot_token: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_client_id: str | None = None
    slack_client_secret: SecretStr | None = None
    health_host: str = "127.0.0.1"
    health_port: int = Field(8080, ge=0, le=65535)  # /healthz and /metrics; 0 turns them off
    log_format: str = "text"  # or "json"
    slack_api_url: str | None = None  # only for tests and proxies; Slack's own URL otherwise
    slack_host: str = "0.0.0.0"
    slack_port: int = Field(3000, ge=0, le=65535)  # 0: any free port (tests run several bots)
    discord_token: SecretStr | None = None
    # Sharding past 2,500 servers: the total and this replica's part; unset, discord.py picks the
    # count and this one replica runs every shard.
    discord_shard_count: int | None = Field(None, ge=1)
    discord_shard_ids: Annotated[list[int] | None, NoDecode] = None
    semantic: str = "auto"  # "off": lexical only, even with the extra; "on": the extra is required
    embedding_path: str | None = None  # a local model folder (model.onnx + tokenizer.json)
    embedding_model: str | None = None  # a Hugging Face Hub repo id, fetched into the HF cache
    # Abstractive TL;DRs through an OpenAI-compatible chat endpoint (docs/tldr.md); unset: the
    # extractive line only. Calls are made at ingest, never while someone waits.
    llm_url: str | None = None
    llm_model: str | None = None
    llm_key: SecretStr | None = None
    llm_timeout_seconds: float = Field(20.0, gt=0, le=MAX_LLM_SECONDS, allow_inf_nan=False)
    llm_per_run: int = Field(50, ge=0)
    llm_per_day: int = Field(500, ge=0)
    # Seals people's Zotero API keys at rest (Fernet; a Fernet key or any passphrase); unset:
    # `/papers me zotero connect` is refused (docs/zotero.md).
    secret_key: SecretStr | None = None
    zotero_api_url: str = "https://api.zotero.org"  # only for tests and proxies
    # Which TL;DR cards show: "stored" (a paper's stored abstractive line, whichever model wrote
    # it and whatever this process is configured with, else the extractive one) or "extractive".
    tldr: str = "stored"

    @field_validator("llm_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"https?://[^/\s]+", value.strip()):
            raise ValueError("not an http(s) URL")
        return value.strip() if value else value

    @field_validator("llm_model")
    @classmethod
    def _model_name(cls, value: str | None) -> str | None:
        return value.strip() if value and value.strip() else None

    def llm(self) -> LlmConfig | None:
        """The TL;DR endpoint's settings (the key revealed only here), or None when unset."""
        if not self.llm_url:
            return None
        from digest.tldr.llm import LlmConfig  # httpx loads only when an endpoint is configured

        if not self.llm_model:
            raise DigestError(
                "bad setting: DIGESTBOT_LLM_URL is set but DIGESTBOT_LLM_MODEL is not; "
                "name the model the endpoint serves (e.g. llama3.2)."
            )
        key = self.llm_key.get_secret_value() if self.llm_key is not None else None
        return LlmConfig(
            url=self.llm_url,
            model=self.llm_model,
            key=key,
            timeout=self.llm_timeout_seconds,
            per_run=self.llm_per_run,
            per_day=self.llm_per_day,
        )

    @field_validator("semantic")
    @classmethod
    def _on_off(cls, value: str) -> str:
        if value.strip().lower() not in SEMANTIC:
            raise ValueError("unknown value")
        return value.strip().lower()

    @field_validator("tldr")
    @classmethod
    def _tldr_source(cls, value: str) -> str:
        if value.strip().lower() not in ("stored", "extractive"):
            raise ValueError("unknown value")
        return value.strip().lower()

    @field_validator("arxiv_queries", "openreview_venues", mode="before")
    @classmethod
    def _json_list(cls, value: Any) -> Any:
        return _json_list_of(value, lambda x: isinstance(x, str), "strings")

    @field_validator("delivery_backoff_seconds", mode="before")
    @classmethod
    def _json_numbers(cls, value: Any) -> Any:
        number = lambda x: isinstance(x, int | float) and not isinstance(x, bool)  # noqa: E731
        return _json_list_of(value, number, "numbers")

    @field_validator("discord_shard_ids", mode="before")
    @classmethod
    def _id_list(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        parts = [p.strip() for p in value.split(",")]
        if not all(p.isdigit() for p in parts):
            raise ValueError("not a comma list of whole numbers")
        return [int(p) for p in parts]

    @field_validator("discord_shard_ids")
    @classmethod
    def _ids_in_count(cls, value: list[int] | None, info: ValidationInfo) -> list[int] | None:
        # discord.py needs the count to place the ids; checked here, at start, not at login
        if value is None:
            return value
        if "discord_shard_count" not in info.data:  # the count's own error says what is wrong
            return value
        count = info.data["discord_shard_count"]
        if count is None:
            raise ValueError("needs DIGESTBOT_DISCORD_SHARD_COUNT too")
        if not value:
            raise ValueError("empty list")
        if len(set(value)) != len(value):
            raise ValueError("a shard id is repeated")
        if max(value) >= count:
            raise ValueError(f"a shard id is not below the shard count {count}")
        return value

    def discord_shards(self) -> Shards | None:
        """This replica's part of Discord's shards, or None: every shard (discord.py decides)."""
        from digest.models import Shards

        if self.discord_shard_count is None:
            return None
        ids = self.discord_shard_ids or range(self.discord_shard_count)
        return Shards(frozenset(ids), self.discord_shard_count)

    @field_validator("default_timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            return parse_timezone(value)
        except DigestError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        if value.upper() not in LEVELS:
            raise ValueError("unknown level")
        return value.upper()

    @field_validator("log_format")
    @classmethod
    def _format(cls, value: str) -> str:
        if value.lower() not in ("text", "json"):
            raise ValueError("unknown format")
        return value.lower()

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


def load_settings(**overrides: Any) -> Settings:
    """The settings, validated; a bad value is one DigestError line naming the variable."""
    _check_env_file(Path(".env"))
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        log.info("settings refused: %s", exc)  # every problem in full, for -v
        problems = dict.fromkeys(_problem(e) for e in exc.errors())  # one line per variable
        raise DigestError("bad setting: " + "; ".join(problems)) from None
    except SettingsError as exc:  # a value pydantic-settings could not even decode
        found = re.search(r'field "(\w+)"', str(exc))
        name = found.group(1) if found else ""
        form = FORMS.get(name, "a valid value")
        var = f"DIGESTBOT_{name.upper()}" if name else "a DIGESTBOT_ variable"
        raise DigestError(f"bad setting: {var}: cannot be read; expected {form}.") from None


def _check_env_file(path: Path) -> None:
    """A .env that cannot be read as text is named, not a bare UnicodeDecodeError from dotenv."""
    if path.is_file():  # dotenv skips a missing one
        read_text_file(path)


def _problem(error: Any) -> str:
    """One validation error as `DIGESTBOT_NAME: what is wrong; expected what`."""
    name = str(error["loc"][0])
    var, msg = f"DIGESTBOT_{name.upper()}", error["msg"].removeprefix("Value error, ")
    if name not in FORMS or name == "default_timezone":  # the zone message names the value
        return f"{var}: {msg}"
    got = str(error.get("input", ""))[:40]  # only FORMS fields, none of them secret
    return f"{var}: {msg[:1].lower() + msg[1:]}, got {got!r}; expected {FORMS[name]}"
