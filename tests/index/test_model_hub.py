"""DIGESTBOT_EMBEDDING_MODEL: a hub repo id fetched by huggingface_hub into its standard cache.

There is no network here, so a stand-in hub on 127.0.0.1 (tests/fakes/hub.py) serves the
packaged model under the real repo's layout (tokenizer.json at the root, ONNX exports under
onnx/), and HF_ENDPOINT points at it. Loads run in a subprocess, as a user's would:
huggingface_hub reads HF_HOME / HF_ENDPOINT / HF_HUB_OFFLINE when it is imported.
Breaks tried, each turns a test here red:
- `fetch` calling the hub with a cache of its own (cache_dir=...): files not in HF_HOME;
- `candidates` without the fp32 fallback: a repo with only onnx/model.onnx fails;
- `model_files` preferring DIGESTBOT_EMBEDDING_MODEL over DIGESTBOT_EMBEDDING_PATH;
- `fetch` letting hub errors through (no ModelUnavailableError): a traceback, not one line;
- `IndexStore._encoder` raising in the bot (strict=False): the bot stops instead of ranking
  lexically; `wired` not strict: the CLI exits 0 with a silently lexical search.
"""

from __future__ import annotations

import json
import logging
import platform
import subprocess
import sys

import pytest

from digest.index.embeddings import ModelConfig, packaged_model
from digest.index.model_hub import INT8, ModelUnavailableError, candidates, parse
from tests.fakes.hub import COMMIT, FakeHub
from tests.support.cli_proc import clean_env, digestbot_proc, one_error

REPO = "sentence-transformers/all-MiniLM-L6-v2"
ONNX = [
    "model.onnx",
    "model_O1.onnx",
    "model_O2.onnx",
    "model_O3.onnx",
    "model_O4.onnx",
    "model_qint8_arm64.onnx",
    "model_qint8_avx512.onnx",
    "model_qint8_avx512_vnni.onnx",
    "model_quint8_avx2.onnx",
]
needs_model = pytest.mark.semantic  # skipped without the extra (tests/conftest.py)
LOAD = (
    "import json; from digest.index.embeddings import load_encoder; e = load_encoder(); "
    "a, b, c = e.encode(['sparse autoencoders', 'dictionary learning of features', 'tax law']); "
    "print(json.dumps({'model': str(e.files.model), 'tokenizer': str(e.files.tokenizer), "
    "'meaning': bool(a @ b > a @ c)}))"
)


def repos() -> dict:
    files = packaged_model()
    layout = {"tokenizer.json": files.tokenizer} | {f"onnx/{n}": files.model for n in ONNX}
    return {
        REPO: layout,
        "acme/fp32-only": {"tokenizer.json": files.tokenizer, "onnx/model.onnx": files.model},
    }


def load(tmp_path, hub_url: str, model: str = REPO, **env: str) -> subprocess.CompletedProcess:
    env = (
        clean_env(
            tmp_path,
            HF_HOME=str(tmp_path / "hf"),
            HF_ENDPOINT=hub_url,
            HF_HUB_OFFLINE="0",
            DIGESTBOT_EMBEDDING_MODEL=model,
            DIGESTBOT_SEMANTIC="auto",
            NO_PROXY="127.0.0.1",
        )
        | env
    )
    return subprocess.run(
        [sys.executable, "-c", LOAD],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


def test_repo_ids_and_the_files_tried():
    assert parse(REPO) == (REPO, None)
    assert parse(f"{REPO}/onnx/model.onnx") == (REPO, "onnx/model.onnx")
    with pytest.raises(ModelUnavailableError, match="repo id"):
        parse("all-MiniLM-L6-v2")
    tried = candidates(None)
    assert tried[-2:] == ["onnx/model.onnx", "model.onnx"]
    assert tried[0] == INT8.get(platform.machine().lower(), "onnx/model.onnx")
    assert candidates("onnx/model_O2.onnx") == ["onnx/model_O2.onnx"]


@needs_model
def test_a_hub_model_is_fetched_once_into_the_hf_cache_then_served_from_it(tmp_path):
    with FakeHub(repos()) as hub:
        first = load(tmp_path, hub.url)
        assert first.returncode == 0, first.stderr
        got = json.loads(first.stdout)
        # (huggingface_hub also asks /api/... for its own purposes; only file fetches count)
        fetched = [p for m, p in hub.requests if m == "GET" and "/resolve/" in p]
    snapshot = tmp_path / "hf" / "hub" / f"models--{REPO.replace('/', '--')}" / "snapshots" / COMMIT
    assert got["model"] == str(snapshot / candidates(None)[0])
    assert got["tokenizer"] == str(snapshot / "tokenizer.json") and got["meaning"]
    assert sorted(fetched) == sorted(
        f"/{REPO}/resolve/main/{f}" for f in ("tokenizer.json", candidates(None)[0])
    )
    down = load(tmp_path, hub.url)  # the hub is gone: the cached copy is used
    assert down.returncode == 0 and json.loads(down.stdout) == got, down.stderr
    offline = load(tmp_path, hub.url, HF_HUB_OFFLINE="1")
    assert offline.returncode == 0 and json.loads(offline.stdout) == got, offline.stderr


@needs_model
def test_a_repo_without_int8_exports_falls_back_to_onnx_model(tmp_path):
    with FakeHub(repos()) as hub:
        proc = load(tmp_path, hub.url, model="acme/fp32-only")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["model"].endswith(f"/snapshots/{COMMIT}/onnx/model.onnx")


@needs_model
def test_a_local_folder_wins_over_a_hub_model(tmp_path):
    folder = tmp_path / "local"
    folder.mkdir()
    (folder / "model.onnx").symlink_to(packaged_model().model)
    (folder / "tokenizer.json").symlink_to(packaged_model().tokenizer)
    with FakeHub(repos()) as hub:
        proc = load(tmp_path, hub.url, DIGESTBOT_EMBEDDING_PATH=str(folder))
        assert not hub.requests  # never asked
    assert proc.returncode == 0 and json.loads(proc.stdout)["model"] == str(folder / "model.onnx")


@needs_model  # the stand-in hub serves the packaged model's files
@pytest.mark.parametrize(
    ("model", "offline", "said"),
    [
        (
            "nobody/nothing",
            "",
            "embedding model 'nobody/nothing' was not found on http://127.0.0.1",
        ),
        (REPO, "1", "is not in the cache"),
    ],
)
def test_a_model_that_cannot_be_had_stops_a_cli_command_with_one_line(
    tmp_path, model, offline, said
):
    with FakeHub(repos()) as hub:
        env = {
            "HF_HOME": str(tmp_path / "hf"),
            "HF_ENDPOINT": hub.url,
            "NO_PROXY": "127.0.0.1",
            "DIGESTBOT_EMBEDDING_MODEL": model,
            "DIGESTBOT_SEMANTIC": "auto",
            "HF_HUB_OFFLINE": offline or "0",
        }
        proc = digestbot_proc(
            tmp_path, "search", "graph neural networks", **env
        )  # HF_* read at import
    line = one_error(proc)
    assert said in line and (not offline or "HF_HUB_OFFLINE is set" in line)


@needs_model
def test_the_bot_logs_the_line_once_and_ranks_lexically(sqlite_store, tmp_path, caplog):
    from huggingface_hub import constants

    from digest.index.lifecycle import IndexStore
    from tests.support.corpus import synthetic_records

    sqlite_store.papers.upsert(synthetic_records(per_topic=3))
    model = ModelConfig(model=REPO)
    with pytest.MonkeyPatch.context() as mp:  # offline with an empty cache, as a user would set
        mp.setattr(constants, "HF_HUB_OFFLINE", True)
        mp.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty"))
        with pytest.raises(ModelUnavailableError):
            IndexStore(sqlite_store, tmp_path, model=model, strict=True)  # a CLI command
        with caplog.at_level(logging.WARNING):
            store = IndexStore(sqlite_store, tmp_path, model=model, strict=False)  # the bot
    assert store.encoder is None and store.embeddings is None
    assert "is not in the cache" in store.model_error
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert lines == [f"{store.model_error}; ranking stays lexical"]
    assert store.current().dense is None  # lexical ranking, and nothing else said
