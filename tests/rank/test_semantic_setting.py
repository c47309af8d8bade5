"""DIGESTBOT_SEMANTIC: auto (use the extra if installed), on (required), off; aliases as README says.

Repro: `on` silently stayed lexical when the semantic extra was missing. Breaks tried on purpose
(each turned a test red):
- `_none_unless_required` not raising (on = auto again);
- `IndexStore._encoder` swallowing `SemanticRequiredError` when not strict (the bot would start
  lexical with `on`);
- an alias dropped from `ModelConfig.required` / `off` (README lists them).
"""

from __future__ import annotations

import sys

import pytest

from digest.index import embeddings
from digest.index.embeddings import ModelConfig, SemanticRequiredError, load_encoder
from digest.index.lifecycle import IndexStore
from tests.support.cli_proc import digestbot_proc, one_error


@pytest.fixture
def no_extra(monkeypatch):
    """The semantic extra not installed: its modules cannot be imported."""
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    monkeypatch.setattr(embeddings, "_CACHE", {})


@pytest.mark.parametrize("value", ["on", "ON", "true", "yes", "1"])
def test_on_without_the_extra_is_an_error(no_extra, value, sqlite_store, tmp_path):
    with pytest.raises(SemanticRequiredError, match="needs the semantic model"):
        load_encoder(ModelConfig(value))
    with pytest.raises(SemanticRequiredError):  # the running bot (not strict) stops too
        IndexStore(sqlite_store, tmp_path / "index", model=ModelConfig(value), strict=False)


@pytest.mark.parametrize("value", ["auto", "off", "false", "no", "0"])
def test_auto_and_off_without_the_extra_rank_lexically(no_extra, value):
    assert load_encoder(ModelConfig(value)) is None


def test_cli_says_it_in_one_line(tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "onnxruntime.py").write_text("raise ImportError('not installed')\n")
    line = one_error(
        digestbot_proc(tmp_path, "search", "graphs", DIGESTBOT_SEMANTIC="on", PYTHONPATH=str(shim))
    )
    assert "DIGESTBOT_SEMANTIC=on needs the semantic model" in line, line
