"""Deployment files, checked statically (no Docker engine runs here)."""

import re
from pathlib import Path

import yaml

from bot.config import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


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
    assert "EnvironmentFile=" in unit
    # No User= that nothing creates: a dynamic user with its own state directory.
    assert "DynamicUser=yes" in unit and "StateDirectory=digestbot" in unit
    assert not re.search(r"^User=", unit, re.M)
    # ProtectHome hides /home, so the documented install must live elsewhere.
    installs = re.findall(r"pip install -e \"(\S+?)\[", unit)
    assert installs and not any(p.startswith("/home") for p in installs)


def test_healthz_is_reachable_through_the_published_port():
    """The image listens on 0.0.0.0; neither .env.example nor compose may pin 127.0.0.1."""
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    assert compose["services"]["bot"]["environment"]["DIGESTBOT_HEALTH_HOST"] == "0.0.0.0"
    example = re.search(
        r"^DIGESTBOT_HEALTH_HOST=(.*)$", (DEPLOY / ".env.example").read_text(), re.M
    )
    assert example.group(1).strip() in ("", "0.0.0.0")


def test_the_index_volume_is_mounted_where_the_image_made_a_writable_folder():
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    bot = compose["services"]["bot"]
    target = next(v.split(":", 1)[1] for v in bot["volumes"] if v.startswith("index:"))
    assert bot["environment"]["DIGESTBOT_INDEX_DIR"] == target
    docker = (DEPLOY / "Dockerfile").read_text()
    assert f"mkdir -p {target}" in docker and re.search(rf"chown \S+ {re.escape(target)}", docker)


def test_an_unwritable_index_folder_does_not_matter(tmp_path):
    """The index lives in the database: a folder that cannot be written holds nothing of it."""
    import digest.index.lifecycle as index_store
    from digest.papers.service import PaperService
    from digest.store import Store
    from tests.support.corpus import synthetic_records

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    store = Store.open(f"sqlite:///{tmp_path / 'x.db'}")
    store.papers.upsert(synthetic_records(per_topic=4))
    service = PaperService(store, index_dir=blocker / "index")
    assert service.search("graph neural networks").result.hits  # search works
    assert store.index_parts.sizes(index_store.FORMAT)[0] == 1  # the fit, shared by the database
    store.close()
