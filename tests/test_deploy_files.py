"""Deployment files, checked statically (no Docker engine runs here)."""

import re
from pathlib import Path

import yaml

from bot.config import Settings

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def env_names() -> set[str]:
    return {f"DIGESTBOT_{name.upper()}" for name in Settings.model_fields}


def test_env_example_documents_every_setting_and_nothing_else():
    listed = set(re.findall(r"^(DIGESTBOT_[A-Z_]+)=", (DEPLOY / ".env.example").read_text(), re.M))
    assert listed == env_names()


def test_compose_runs_the_bot_on_postgres_16_with_a_volume_and_the_env_file():
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    db, bot = compose["services"]["db"], compose["services"]["bot"]
    assert db["image"] == "postgres:16" and any(v.startswith("pgdata:") for v in db["volumes"])
    assert "pgdata" in compose["volumes"] and db["healthcheck"]["test"]
    assert bot["env_file"] == ".env" and bot["depends_on"]["db"]["condition"] == "service_healthy"
    assert bot["environment"]["DIGESTBOT_DATABASE_URL"].startswith("postgresql://digestbot:")
    assert set(bot["environment"]) <= env_names()
    assert (DEPLOY / bot["build"]["dockerfile"].removeprefix("deploy/")).exists()


def test_dockerfile_is_slim_non_root_and_health_checked():
    text = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.1[1-9]-slim", text, re.M)
    assert (
        re.search(r"^USER (?!root)\w+", text, re.M) and "HEALTHCHECK" in text and "/healthz" in text
    )
    assert 'CMD ["digestbot", "run"]' in text
    for path in re.findall(r"^COPY (\S+) ", text, re.M):
        assert (DEPLOY.parent / path).exists(), path


def test_systemd_unit_restarts_the_bot():
    unit = (DEPLOY / "digestbot.service").read_text()
    assert (
        "ExecStart=/opt/digestbot/.venv/bin/digestbot run" in unit and "Restart=on-failure" in unit
    )
    assert "EnvironmentFile=" in unit and re.search(r"^User=(?!root)", unit, re.M)
