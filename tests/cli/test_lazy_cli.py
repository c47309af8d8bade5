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

ROOT = Path(__file__).resolve().parents[2]
#: Module roots a listing must not import: the ranker's and the embedding model's, the chat
#: SDKs, the scheduler, Alembic; then what the composition root and the command core once
#: loaded for every command: NumPy (ranking results, the profile, the encoder), the HTTP client
#: and feed parser (ingest), the PostgreSQL dialect (on SQLite), Prometheus (metrics nobody
#: scrapes in a one-shot command) and rich (most commands print plain lines).
HEAVY = (
    "sklearn",
    "scipy",
    "onnxruntime",
    "tokenizers",
    "joblib",
    "digest.rank.ranker",
    "digest.rank.index",
    "digest.index.lifecycle",
    "huggingface_hub",
    "alembic",
    "aiohttp",
    "slack_bolt",
    "discord",
    "apscheduler",
    "matplotlib",
    "numpy",
    "httpx",
    "feedparser",
    "digest.ingest.pipeline",
    "sqlalchemy.dialects.postgresql",
    "prometheus_client",
    "rich",
    "pylatexenc",
    "bibtexparser",
)
#: Then what these commands loaded, unused, until branch cli21 (issue 21, item 4): the other
#: commands' modules (ingest, export, run), the library import's parsers, the store's paper,
#: batch and weekly repositories, and the analyzer (a profile only says whether it is empty).
UNUSED = (
    "bot.cli.papers",
    "bot.cli.ops",
    "bot.cli.run",
    "digest.library.entries",
    "digest.library.seed",
    "digest.ingest.parse",
    "digest.store.batch",
    "digest.store.weekly",
    "digest.rank.analyzer",
    "Stemmer",
)
#: The paper repository (and its cite keys): a vote finds its paper there, nothing else here does.
PAPER_REPO = ("digest.store.papers", "digest.text.bibtex")
#: `channels` itself runs no chat command: neither the command core nor its replies' text tools.
NOT_FOR_CHANNELS = (
    "bot.commands",
    "bot.cli.library",
    "digest.text.headline",
    "digest.tldr.extractive",
    "digest.channels.subscriptions",
    "digest.channels.settings",
)

PROBE = """
import json, sys
from bot.cli.main import main
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
    code = f"HEAVY = {HEAVY + UNUSED + PAPER_REPO + NOT_FOR_CHANNELS!r}\n{PROBE}"
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


@pytest.fixture(scope="module")
def paper_id(workdir: Path) -> str:
    """A stored paper's id, to vote on."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(workdir),
        "DIGESTBOT_DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite'}",
        "DIGESTBOT_INDEX_DIR": str(workdir / "index"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "bot", "papers", "list", "-n", "1"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.split()[0]


@pytest.mark.parametrize(
    "args",
    [
        ("channels",),
        ("cmd", "console:lab", "/papers list"),
        ("cmd", "console:lab", "/papers schedule 10:00 Europe/Berlin weekdays"),
        ("cmd", "console:lab", "/papers size 7"),
        ("cmd", "console:lab", "/papers pause"),
        ("cmd", "console:lab", "/papers resume"),
        ("feedback", "console:lab", "{paper}", "up"),
        ("cmd", "console:lab", "/papers up {paper}"),
    ],
    ids=["channels", "list", "schedule", "size", "pause", "resume", "feedback", "vote"],
)
def test_commands_that_rank_nothing_load_no_ranker_model_or_migrations(workdir, paper_id, args):
    """Break tried, red: IndexStore built in PaperService.__init__ (the embedding model and the
    index store load). Each of these would show in the same list (the module it imports is in
    HEAVY): analyzer.py importing sklearn's stop-word list; digest.channels.service, backlog or delivery
    importing digest.delivery.compose at module level (the ranker); `cmd` building the runner (metrics:
    aiohttp) when nothing is posted; upgrade() running Alembic on a database at the head.
    Also tried, red: `import numpy as np` back at the top of digest/rank/results.py,
    digest/rank/profile.py or digest/index/embeddings.py; SourceConfig imported from
    digest.ingest.pipeline in bot/app.py (httpx, feedparser); `from sqlalchemy.dialects import
    postgresql, sqlite` back at the top of digest/store/channels.py; App.commands observing
    with `self.metrics.command` (prometheus_client); `from rich.console import Console` at the
    top of bot/cli/main.py.

    And for what they no longer load (UNUSED, PAPER_REPO, NOT_FOR_CHANNELS), tried, red: bot/cli/main.py main()
    importing every bot/cli/*.py module again (bot.cli.papers, bot.cli.ops, bot.cli.run);
    digest/store/__init__.py importing its repositories at the top again (digest.store.batch,
    .papers, .weekly); `from digest.library.seed import LibraryImports` at the top of
    digest/channels/service.py; `from digest.library.entries import FORMATS, parse_library` at the top of
    bot/commands/handlers_library.py (list, schedule...); `from digest.rank.analyzer import
    phrase_terms` at the top of digest/rank/profile.py; Subscriptions built in
    ChannelService.__init__ (channels)."""
    args = tuple(a.replace("{paper}", paper_id) for a in args)
    result = _loaded(workdir, *args)
    assert result["code"] == 0
    vote = args[0] == "feedback" or args[-1].startswith("/papers up")
    unwanted = HEAVY + UNUSED + (() if vote else PAPER_REPO)
    unwanted += NOT_FOR_CHANNELS if args[0] == "channels" else ()
    heavy = [m for m in result["heavy"] if any(m == h or m.startswith(h + ".") for h in unwanted)]
    assert heavy == [], heavy


def test_a_search_still_loads_the_ranker(workdir):
    """The other side: a command that ranks does load it (the probe sees what it should), and
    `ingest` loads its own module (a command is registered when it is named)."""
    result = _loaded(workdir, "cmd", "console:lab", "/papers search sparse autoencoders")
    assert result["code"] == 0 and "digest.rank.ranker" in result["heavy"]
    result = _loaded(workdir, "--db", f"sqlite:///{workdir / 'db.sqlite'}", "ingest", "--help")
    assert result["code"] == 0 and "bot.cli.papers" in result["heavy"]
    assert "bot.cli.run" not in result["heavy"]


def test_each_command_is_registered_by_the_module_named_for_it():
    """bot/cli/main.py imports only the module COMMAND_MODULE names for the command typed: a command
    (or group) missing there, or named with the wrong module, would be 'No such command' or
    load the wrong module. Break tried, red: "channels" mapped to bot.cli.papers."""
    code = (
        "import json, bot.cli.main as c; c.register([]); "
        "groups = {g.name: g.typer_instance.registered_commands for g in c.app.registered_groups}; "
        "print(json.dumps({'commands': {k.name: k.callback.__module__ for k in c.app.registered_commands}, "
        "'groups': {n: sorted({k.callback.__module__ for k in cs}) for n, cs in groups.items()}, "
        "'map': c.COMMAND_MODULE}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    got = json.loads(done.stdout.splitlines()[-1])
    named = {**got["commands"], **{n: m[0] for n, m in got["groups"].items()}}
    assert all(len(m) == 1 for m in got["groups"].values()), got["groups"]
    assert named == got["map"]


def test_the_help_lists_commands_in_the_same_order_whatever_loaded_first():
    """A command's module alone may be imported first (bot.cli.run imports bot.cli.channels
    before bot.cli.papers is ever loaded): the help still lists ingest and search first, as
    always. Break tried, red: the sort in bot/cli/main.py register() removed."""
    code = (
        "import bot.cli.run, bot.cli.main as c; c.register(['--help']); "
        "print(' '.join(k.name for k in c.app.registered_commands))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == [
        "ingest",
        "search",
        "cmd",
        "subscribe",
        "feedback",
        "digest",
        "channels",
        "import-library",
        "export",
        "import",
        "run",
    ]


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["channels"], "channels"),
        (["--db", "sqlite:///x.db", "-v", "cmd", "console:lab", "/papers list"], "cmd"),
        (["--db=sqlite:///x.db", "--verbose", "run"], "run"),
        (["--help"], None),
        ([], None),
        (["--bogus", "channels"], None),  # Typer says what is wrong, with every command known
        (["--db"], None),
    ],
)
def test_the_command_name_is_read_after_the_roots_options(argv, name):
    from bot.cli.main import command_name

    assert command_name(argv) == name


def test_the_stop_word_copy_equals_scikit_learns():
    """analyzer.py keeps scikit-learn's English stop words as a file; the two must agree, or
    ranking would change silently. Break that turns this red: editing english_stop_words.txt."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from digest.rank import analyzer

    assert frozenset(analyzer._ENGLISH) == ENGLISH_STOP_WORDS
