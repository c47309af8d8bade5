"""deploy/docker-compose.replicas.yml: two bot replicas on one PostgreSQL behind one Slack URL.

Breaks that turn this red: a replica on another database (or SQLite); the load balancer missing
a replica or pointing at another port; a setting name the bot does not have.
"""

import re
from pathlib import Path

import yaml

from bot.config import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


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


def test_the_replicas_split_the_discord_shards_between_them():
    """Every shard run by exactly one replica, all on one count, each replica's values valid.
    Breaks that turn this red: two replicas on the same shard id; different counts; a shard
    id left to nobody."""
    compose = yaml.safe_load((DEPLOY / "docker-compose.replicas.yml").read_text())
    envs = [s["environment"] for n, s in compose["services"].items() if n.startswith("bot-")]
    shards = [
        Settings(
            discord_shard_count=e["DIGESTBOT_DISCORD_SHARD_COUNT"],
            discord_shard_ids=e["DIGESTBOT_DISCORD_SHARD_IDS"],
        ).discord_shards()
        for e in envs
    ]
    (count,) = {s.count for s in shards}
    held = [i for s in shards for i in s.ids]
    assert sorted(held) == list(range(count))
