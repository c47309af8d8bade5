"""Issue 21, item 4: commands that rank nothing load nothing that ranks.

`digestbot channels` and `cmd … "/papers list"` (and schedule, settings, pause) took about 4
CPU-seconds and 418 MB on the bundled papers: scikit-learn, SciPy, the ranker, the embedding
model (onnxruntime, tokenizers) and Alembic loaded for a listing. Each is checked here in a
fresh interpreter: what ``sys.modules`` holds after the command. CPU figures come from
`/usr/bin/time`, not from a test (see the report / docs).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Module roots a listing must not import: the ranker's and the embedding model's, the chat
#: SDKs, the scheduler, Alembic; then what the composition root and the command core once
#: loaded for every command: NumPy (ranking results, the profile, the encoder), the HTTP client
#: and feed parser (ingest), the PostgreSQL dialect (on SQLite), Prometheus (metrics nobody
#: scrapes in a one-shot command) and rich (most commands print plain lines).
HEAVY = ("sklearn", "scipy", "onnxruntime", "tokenizers", "joblib", "digest.rank.ranker",
         "digest.rank.index", "digest.index_store", "huggingface_hub", "alembic", "aiohttp",
         "slack_bolt", "discord", "apscheduler", "matplotlib", "numpy", "httpx", "feedparser",
         "digest.ingest.pipeline", "sqlalchemy.dialects.postgresql", "prometheus_client",
         "rich", "pylatexenc", "bibtexparser")  # fmt: skip

PROBE = """
import json, sys
from bot.cli import main
code = main(sys.argv[1:])
heavy = sorted({m for m in sys.modules for h in HEAVY if m == h or m.startswith(h + ".")})
print("\\nMODULES " + json.dumps({"code": code, "heavy": heavy}))
"""


def _loaded(tmp_path: Path, *args: str) -> dict:
    """Run ``digestbot ARGS`` in a fresh interpreter; the exit code and the heavy modules it loaded."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "DIGESTBOT_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite'}",
        "DIGESTBOT_INDEX_DIR": str(tmp_path / "index"),
    }
    code = f"HEAVY = {HEAVY!r}\n{PROBE}"
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = [x for x in done.stdout.splitlines() if x.startswith("MODULES ")]
    assert line, done.stdout + done.stderr
    return json.loads(line[-1].removeprefix("MODULES "))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with the bundled papers, a channel following a topic and an index built."""
    folder = tmp_path_factory.mktemp("lazy")
    from digest import BUNDLED_PAPERS

    assert _loaded(folder, "ingest", str(BUNDLED_PAPERS))["code"] == 0
    assert (
        _loaded(folder, "cmd", "console:lab", "/papers subscribe sparse autoencoders")["code"] == 0
    )
    return folder


@pytest.mark.parametrize(
    "args",
    [
        ("channels",),
        ("cmd", "console:lab", "/papers list"),
        ("cmd", "console:lab", "/papers schedule 10:00 Europe/Berlin weekdays"),
        ("cmd", "console:lab", "/papers size 7"),
        ("cmd", "console:lab", "/papers pause"),
        ("cmd", "console:lab", "/papers resume"),
    ],
    ids=["channels", "list", "schedule", "size", "pause", "resume"],
)
def test_commands_that_rank_nothing_load_no_ranker_model_or_migrations(workdir, args):
    """Break tried, red: IndexStore built in PaperService.__init__ (the embedding model and the
    index store load). Each of these would show in the same list (the module it imports is in
    HEAVY): analyzer.py importing sklearn's stop-word list; digest.channel_service, backlog or delivery
    importing digest.compose at module level (the ranker); `cmd` building the runner (metrics:
    aiohttp) when nothing is posted; upgrade() running Alembic on a database at the head.
    Also tried, red: `import numpy as np` back at the top of digest/rank/results.py,
    digest/rank/profile.py or digest/embeddings.py; SourceConfig imported from
    digest.ingest.pipeline in bot/app.py (httpx, feedparser); `from sqlalchemy.dialects import
    postgresql, sqlite` back at the top of digest/store/channels.py; App.commands observing
    with `self.metrics.command` (prometheus_client); `from rich.console import Console` at the
    top of bot/cli.py."""
    result = _loaded(workdir, *args)
    assert result["code"] == 0
    assert result["heavy"] == [], result["heavy"]


def test_a_search_still_loads_the_ranker(workdir):
    """The other side: a command that ranks does load it (the probe sees what it should)."""
    result = _loaded(workdir, "cmd", "console:lab", "/papers search sparse autoencoders")
    assert result["code"] == 0 and "digest.rank.ranker" in result["heavy"]


def test_the_stop_word_copy_equals_scikit_learns():
    """analyzer.py keeps scikit-learn's English stop words as a file; the two must agree, or
    ranking would change silently. Break that turns this red: editing english_stop_words.txt."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from digest.rank import analyzer

    assert frozenset(analyzer._ENGLISH) == ENGLISH_STOP_WORDS
