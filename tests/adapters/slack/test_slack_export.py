"""Item 13: moving a multi-workspace (OAuth) deployment keeps its Slack installations.

Breaks tried: export_state ignoring secret_tables (the import finds no bot token: red);
writing the file with write_text (mode 0644: red); import accepting any table named in the
file (the 'channels' smuggling case is accepted: red); PostgreSQL sequences not reset for the
secret tables (the next installation collides on id 1: red on postgres).
"""

import asyncio
import json
import stat
from datetime import UTC, datetime

from slack_sdk.oauth.installation_store import Installation

from bot.adapters.slack.stores import InstallationStore
from bot.cli.main import main
from digest.models import ChannelRef, SubscriptionKind
from digest.store import Store
from tests.conftest import make_app


def oauth_deployment(tmp_path):
    app = make_app(f"sqlite:///{tmp_path / 'src.db'}", tmp_path / "src")
    app.channels.follows.add(
        ChannelRef("slack", "C1", "T7"), SubscriptionKind.TOPIC, "diffusion models"
    )
    store = InstallationStore("111.222", app.store.engine)
    install = Installation(
        app_id="A1",
        team_id="T7",
        team_name="Lab",
        user_id="U1",
        bot_token="xoxb-installed-T7",
        bot_id="B1",
        bot_user_id="UBOT",
        bot_scopes="commands,chat:write",
        installed_at=datetime.now(UTC).timestamp(),
    )
    store.sync.save(install)
    return app


def test_export_with_secrets_is_private_and_restores_the_installations(
    tmp_path, env_isolated, db_url
):
    src = oauth_deployment(tmp_path)
    plain, secret = tmp_path / "plain.json", tmp_path / "secret.json"
    assert main(["--db", src.database_url, "export", str(plain)]) == 0
    assert "xoxb" not in plain.read_text() and "secrets" not in json.loads(plain.read_text())
    assert main(["--db", src.database_url, "export", "--include-secrets", str(secret)]) == 0
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert stat.S_IMODE(plain.stat().st_mode) == 0o600
    assert main(["--db", db_url, "import", str(secret)]) == 0
    target = Store.open(db_url)
    moved = InstallationStore("111.222", target.engine)
    bot = asyncio.run(moved.async_find_bot(enterprise_id=None, team_id="T7"))
    assert bot is not None and bot.bot_token == "xoxb-installed-T7"
    moved.sync.save(
        Installation(
            app_id="A1",
            team_id="T8",
            user_id="U2",
            bot_token="xoxb-T8",
            bot_id="B2",
            bot_user_id="UBOT2",
        )
    )  # ids continue after import
    assert (
        asyncio.run(moved.async_find_bot(enterprise_id=None, team_id="T8")).bot_token == "xoxb-T8"
    )
    target.close()


def test_import_refuses_secrets_for_other_tables(tmp_path, env_isolated, capsys):
    src = oauth_deployment(tmp_path)
    secret = tmp_path / "secret.json"
    assert main(["--db", src.database_url, "export", "--include-secrets", str(secret)]) == 0
    doc = json.loads(secret.read_text())
    doc["secrets"]["channels"] = doc.pop("channels")
    doc["channels"] = []
    secret.write_text(json.dumps(doc))
    target = f"sqlite:///{tmp_path / 'dst.db'}"
    assert main(["--db", target, "import", str(secret)]) == 2
    assert "refuses" in capsys.readouterr().err
    assert Store.open(target).channels.all() == []
