"""The bundled papers and migrations ship inside the package, so a wheel (`pip install .`, the
Docker image) has them, not only a source checkout.

Breaks that turn this red: `"digest" = ["data/*.txt"]` dropped from package-data (seen red: the
wheel has no papers); expected red, not run: BUNDLED_PAPERS pointing back at a top-level data/
folder (outside the package); the migrations' package-data entry dropped; `"data/minilm/*"`
dropped (no tokenizer in the wheel).
"""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import digest
from digest import BUNDLED_PAPERS

ROOT = Path(__file__).resolve().parents[1]


def test_bundled_papers_live_inside_the_package():
    package = Path(digest.__file__).resolve().parent
    assert package in BUNDLED_PAPERS.resolve().parents and BUNDLED_PAPERS.is_file()


def test_a_built_wheel_carries_the_papers_and_migrations(tmp_path):
    pytest.importorskip("setuptools.build_meta")
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in ("digest", "bot"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    code = "import sys; from setuptools import build_meta as b; print(b.build_wheel(sys.argv[1]))"
    built = subprocess.run([sys.executable, "-c", code, str(tmp_path / "dist")], cwd=src,
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = tmp_path / "dist" / built.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert archive.read("digest/data/neurips2026.txt") == BUNDLED_PAPERS.read_bytes()
    assert any(n.startswith("digest/store/migrations/versions/0001") for n in names), names
    assert "digest/store/migrations/script.py.mako" in names
    # the embedding model's tokenizer ships with its licence (the semantic extra needs it)
    assert {"digest/data/minilm/tokenizer.json", "digest/data/minilm/LICENSE"} <= names
    assert "digest/rank/calibration.txt" in names and "digest/rank/generic_words.txt" in names
