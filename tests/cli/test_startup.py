"""A bad token is one clear line per platform, never a silent hang or a stream of tracebacks.

Deliberate breaks that turn these red: `_start_platforms` starting Slack without
`slack_problem` (the bogus token runs and never exits); `start_discord` letting LoginFailure
escape (a traceback); Health ignoring `failed` (/healthz does not name Discord).
"""

import asyncio
import subprocess
import sys

import discord

from bot.app import build
from bot.cli.startup import start_discord
from bot.config import Settings
from bot.runtime.ops import Health
from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack
from tests.support.cli_proc import clean_env

INVALID = (200, {}, {"ok": False, "error": "invalid_auth"})


def test_bogus_slack_token_is_one_line_and_exit_2(tmp_path):
    with FakeSlack() as slack:
        slack.fail[("auth.test", "")] = [INVALID] * 5
        env = clean_env(
            tmp_path,
            DIGESTBOT_SLACK_BOT_TOKEN="xoxb-bogus",
            DIGESTBOT_SLACK_SIGNING_SECRET="s",
            DIGESTBOT_SLACK_API_URL=slack.url,
            DIGESTBOT_SLACK_PORT="65009",
            DIGESTBOT_HEALTH_PORT="0",
            DIGESTBOT_DISCORD_TOKEN="",
        )
        proc = subprocess.run(
            [sys.executable, "-m", "bot", "run"],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "error: no platform could start: Slack login failed: invalid_auth (check the Slack tokens)"
    )
    assert "Traceback" not in proc.stderr and "xoxb-bogus" not in proc.stderr + proc.stdout


class RefusingDiscord(FakeDiscord):
    """Discord answers a bad token with 401 on /users/@me, as the real API does."""

    def answer(self, method, path, body, files=None):
        if path == "/users/@me":
            return 401, {}, {"message": "401: Unauthorized", "code": 0}
        return super().answer(method, path, body, files)


def test_bogus_discord_token_is_reported_and_named_by_healthz(tmp_path, monkeypatch):
    with RefusingDiscord() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.base)
        app = build(
            f"sqlite:///{tmp_path / 'd.db'}",
            Settings(
                database_url=f"sqlite:///{tmp_path / 'd.db'}",
                index_dir=str(tmp_path / "i"),
                discord_token="bogus",
            ),
        )
        outcome = asyncio.run(start_discord(app))
    assert isinstance(outcome, str) and "Improper token" in outcome
    app.failed["discord"] = outcome
    health = Health(app.papers, platforms={"discord": lambda: False}, failed=app.failed)
    ok, checks = asyncio.run(health.report())
    assert not ok and checks["discord"]["error"].startswith("login failed: Improper token")


def test_blank_tokens_mean_off(tmp_path):
    """DIGESTBOT_DISCORD_TOKEN= (as in deploy/.env.example) must not turn Discord on."""
    env = clean_env(
        tmp_path,
        DIGESTBOT_DISCORD_TOKEN="",
        DIGESTBOT_SLACK_BOT_TOKEN="",
        DIGESTBOT_SLACK_APP_TOKEN="",
        DIGESTBOT_HEALTH_PORT="",
    )
    code = (
        "from bot.config import load_settings; s = load_settings(); "
        "print(s.discord_token, s.slack().enabled, s.health_port)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert out.stdout.split() == ["None", "False", "8080"], out.stderr


def test_discord_sync_with_a_bad_token_is_one_line(monkeypatch, capsys, env_isolated):
    """Through the real entry point (in-process, so discord.py can be pointed at the fake)."""
    from bot.cli.main import main

    monkeypatch.setenv("DIGESTBOT_DISCORD_TOKEN", "bogus")
    with RefusingDiscord() as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.base)
        code = main(["discord", "sync"])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().splitlines() == [
        "error: Discord login failed: Improper token has been passed."
    ]
    assert "Unclosed client session" not in err and "Traceback" not in err


def test_third_party_start_up_noise_is_silenced(tmp_path, caplog):
    """Bolt warns that the token "will be unused" when given a client: noise, not a problem."""
    from pydantic import SecretStr

    settings = Settings(
        index_dir=str(tmp_path / "i"),
        slack_bot_token=SecretStr("xoxb-1"),
        slack_signing_secret=SecretStr("s"),
    )
    app = build(f"sqlite:///{tmp_path / 'n.db'}", settings)
    assert app.slack is not None
    assert "will be unused" not in caplog.text
