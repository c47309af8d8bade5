"""The composition root: platforms start only when configured."""

import subprocess
import sys

from pydantic import SecretStr

from bot.app import build
from bot.config import Settings


def test_without_tokens_nothing_about_slack_starts(tmp_path):
    app = build(f"sqlite:///{tmp_path / 'a.db'}", Settings(index_dir=str(tmp_path / "i")))
    assert app.slack is None and set(app.adapters) == {"console"}
    code = "import bot.cli.main, bot.app, sys; sys.exit(any(m.startswith(('slack_bolt', 'discord')) for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0  # not even imported


def test_with_a_bot_token_slack_is_wired(tmp_path):
    settings = Settings(
        index_dir=str(tmp_path / "i"),
        slack_bot_token=SecretStr("xoxb-1"),
        slack_signing_secret=SecretStr("s"),
    )
    app = build(f"sqlite:///{tmp_path / 'a.db'}", settings)
    assert app.slack is not None and set(app.adapters) == {"console", "slack"}
    assert "xoxb-1" not in repr(settings)  # secrets never print
