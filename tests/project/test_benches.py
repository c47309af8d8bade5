"""Every living bench runs end to end at a small size, so a bench that no longer runs is caught.

Each runs as `python -m bench.NAME` on a small evaluation set in the shared data's layout
(tests/support/eval_data.py) and must exit 0 and print its table. Not a timing test: the figures
themselves are for docs/benchmarks.md, measured on the real data.

Breaks that turn this red (tried): a renamed query file ("themes" → "theme" in bench/common.py's
QUERY_FILES: the quality table loses a file); a bench whose main raises on its own data
(bench/tldr.py reading "abstracts" for "abstract"). A bench importing a module the tree no longer
has fails the same way (the move of this round rewrote imports in 18 bench files)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from digest.index.embeddings import semantic_available
from tests.support.eval_data import write_eval_dir

ROOT = Path(__file__).resolve().parents[2]

#: (module, arguments, what its output must contain)
BENCHES = [
    ("quality", [], "themes.jsonl"),
    ("calibration", ["--lexical"], "ECE cross-validated"),
    ("feedback", ["--lexical"], "queries"),
    ("why", [], "queries"),
    ("tldr", [], "TL;DR rule"),
    ("headlines", [], "current"),
    ("generic_words", [], "single-word terms"),
    ("tune", ["index"], "nDCG@10 queries"),
    ("speed", ["--sizes", "400", "--kinds", "ours,tfidf"], "400"),
    ("why_cost", ["--size", "400", "--rounds", "1"], "why"),
    ("index_refresh", ["--batch", "10", "--rounds", "1"], "round"),
    ("schedule", ["--channels", "20"], "20"),
    ("weekly_sweep", ["--channels", "20"], "20"),
    ("embed_cost", ["--papers", "8"], "papers"),
    ("cli_cost", ["--runs", "1"], "channels"),
    ("similar_floor", [], "LSA space"),
    ("crossval", ["--lexical"], "scalar constants"),
    ("shared_index", ["--base", "60", "--batch", "20"], "index parts stored"),
]
NEEDS_MODEL = {"embed_cost"}
#: The comparison systems come from the `bench` extra (CI installs it); without it these skip.
NEEDS_BENCH_EXTRA = {"quality", "speed"}


@pytest.fixture(scope="module")
def eval_dir(tmp_path_factory) -> Path:
    return write_eval_dir(tmp_path_factory.mktemp("eval"))


@pytest.mark.parametrize(("name", "args", "shows"), BENCHES, ids=[b[0] for b in BENCHES])
def test_a_living_bench_runs_at_a_small_size(eval_dir, tmp_path, name, args, shows):
    if name in NEEDS_MODEL and not semantic_available():
        pytest.skip("needs the semantic extra's model")
    if name in NEEDS_BENCH_EXTRA:
        pytest.importorskip("bm25s", reason="needs the bench extra")
    env = os.environ | {
        "DIGESTBOT_EVAL_DIR": str(eval_dir),
        "DIGESTBOT_BENCH_CACHE": str(tmp_path / "cache"),
        "DIGESTBOT_DATA_DIR": str(tmp_path / "data"),
        "OMP_NUM_THREADS": "1",
        # the suite turns meaning off for the bot; a bench that measures the model needs it on
        "DIGESTBOT_SEMANTIC": "on" if name in NEEDS_MODEL else "off",
    }
    run = subprocess.run(
        [sys.executable, "-m", f"bench.{name}", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert shows in run.stdout, run.stdout[-3000:]
