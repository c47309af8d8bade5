"""deploy/docker-compose.replicas.yml: two bot replicas on one PostgreSQL behind one Slack URL.

Breaks that turn this red: a replica on another database (or SQLite); the load balancer missing
a replica or pointing at another port; a setting name the bot does not have.
"""

import re
from pathlib import Path

import yaml

from bot.config import Settings

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def test_two_replicas_share_one_postgres_and_the_slack_url_reaches_both():
    compose = yaml.safe_load((DEPLOY / "docker-compose.replicas.yml").read_text())
    services = compose["services"]
    bots = {name: s for name, s in services.items() if name.startswith("bot-")}
    assert len(bots) == 2
    settings = {f"DIGESTBOT_{n.upper()}" for n in Settings.model_fields}
    urls = {s["environment"]["DIGESTBOT_DATABASE_URL"] for s in bots.values()}
    assert len(urls) == 1 and urls.pop().startswith("postgresql://digestbot:")
    for s in bots.values():
        assert set(s["environment"]) <= settings
        assert s["depends_on"]["db"]["condition"] == "service_healthy"
        assert (DEPLOY / s["build"]["dockerfile"].removeprefix("deploy/")).exists()
    lb = services["slack-lb"]
    conf_path = lb["volumes"][0].split(":")[0].removeprefix("./")
    conf = (DEPLOY / conf_path).read_text()
    upstream = set(re.findall(r"server (bot-[a-z]+):(\d+)", conf))
    assert upstream == {(name, "3000") for name in bots}
    assert "3000:3000" in lb["ports"]
