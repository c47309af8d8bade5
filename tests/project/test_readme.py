"""docs/configuration.md's table lists every setting with its real default.

Deliberate breaks that turn this red: a setting added to bot/config.py without a row there;
the log level default changed in code only; a backoff list default changed in code only; the missing-driver error suggesting another command.
"""

import re
from pathlib import Path

from bot.config import Settings

ROOT = Path(__file__).resolve().parents[2]
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")


def _rows() -> dict[str, str]:
    """Variable -> default cell, from the configuration table."""
    section = CONFIGURATION.split("# Configuration", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`DIGESTBOT_"):
            for name in re.findall(r"`(DIGESTBOT_[A-Z_]+)`", cells[0]):
                rows[name] = cells[1]
    return rows


def test_every_setting_has_a_row_with_its_real_default():
    rows = _rows()
    names = {f"DIGESTBOT_{n.upper()}": f for n, f in Settings.model_fields.items()}
    assert set(rows) == set(names)
    for name, field in names.items():
        default = field.default
        if default is None:
            assert rows[name].startswith("unset"), name
        elif isinstance(default, bool | int | float) or (isinstance(default, str) and default):
            shown = f"{default:g}" if isinstance(default, float) else str(default)
            assert f"`{shown}`" in rows[name], (name, rows[name])
        elif isinstance(default, list):  # shown as the JSON list a user would write
            shown = "[" + ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in default)
            assert f"`{shown}]`" in rows[name], (name, rows[name])
        elif default == "":  # derived at run time: the row must say from what, not "unset"
            assert rows[name] and not rows[name].startswith("unset"), (name, rows[name])


def test_missing_driver_error_and_readme_give_the_same_install_command(monkeypatch):
    import pytest

    from digest.errors import StoreUnavailableError
    from digest.store import database

    def no_driver(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'psycopg'")

    monkeypatch.setattr(database, "create_engine", no_driver)
    with pytest.raises(StoreUnavailableError) as caught:
        database.make_engine("postgresql://u:pw@localhost/db")
    command = 'pip install -e ".[postgres]"'
    assert command in str(caught.value) and f"(`{command}`)" in CONFIGURATION


def test_readme_stays_a_guide():
    """The README is a short guide; the details live in docs/ (issue 24).

    Breaks that turn this red: README over 150 lines; a docs page it links to missing; the
    Quickstart no longer exactly two shell lines (install-and-run, install-and-test)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).exists(), link
    quickstart = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = quickstart.split("```sh\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(block) == 2 and block[0].endswith("digestbot run") and block[1].endswith("pytest")


def test_the_quickstarts_subscribe_example_matches_a_bundled_paper(tmp_path):
    """The `subscribe` the Quickstart tells a new user to type at the demo's prompt finds a
    bundled paper. Break that turns this red: the old `subscribe author:Ada Lovelace` (no
    bundled paper lists authors: "No stored paper matches it yet")."""
    from bot.app import build
    from bot.commands.core import Context
    from bot.config import Settings
    from digest import BUNDLED_PAPERS
    from digest.models import ChannelRef

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme.split("At the prompt type any chat command:", 1)[1].split("\n\n", 1)[0]
    examples = re.findall(r"`/papers (subscribe [^`<]+)`", quick)
    assert examples, quick
    db = f"sqlite:///{tmp_path / 'demo.db'}"
    app = build(db, Settings(index_dir=str(tmp_path / "index"), database_url=db))
    try:
        app.papers.ingest(str(BUNDLED_PAPERS))
        for typed in examples:
            reply = app.commands.handle(typed, Context(ChannelRef("console", "lab"), "ann"))
            assert not reply.error and re.search(r"\d+ stored papers? match", reply.text), (
                typed,
                reply.text,
            )
    finally:
        app.close()
