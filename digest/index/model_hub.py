"""An embedding model fetched from the Hugging Face Hub by repo id, into the hub's own cache.

``huggingface_hub`` does the fetching as it does for every library that uses it: files land in
the standard cache (``HF_HOME``, default ``~/.cache/huggingface``), ``HF_ENDPOINT`` names the hub
and ``HF_HUB_OFFLINE=1`` serves from the cache alone; when the hub cannot be reached, a cached
copy is used. sentence-transformers repos keep ONNX exports under ``onnx/`` (``model.onnx`` and
int8 variants such as ``model_quint8_avx2.onnx``) and ``tokenizer.json`` at the root.
"""

from __future__ import annotations

import platform
from pathlib import Path

from digest.errors import DigestError

# The int8 export that suits this processor, then full precision: what sentence-transformers
# repos ship under onnx/; a repo with only a root model.onnx works too.
INT8 = {
    "x86_64": "onnx/model_quint8_avx2.onnx",
    "amd64": "onnx/model_quint8_avx2.onnx",
    "aarch64": "onnx/model_qint8_arm64.onnx",
    "arm64": "onnx/model_qint8_arm64.onnx",
}
FULL = ("onnx/model.onnx", "model.onnx")


class ModelUnavailableError(DigestError):
    """The configured embedding model cannot be had (one line says why)."""


def parse(spec: str) -> tuple[str, str | None]:
    """'owner/name' or 'owner/name/path/to/file.onnx' -> (repo id, file or None)."""
    parts = [p for p in spec.strip().strip("/").split("/") if p]
    if len(parts) < 2:
        raise ModelUnavailableError(
            f"DIGESTBOT_EMBEDDING_MODEL must be a hub repo id like "
            f"'sentence-transformers/all-MiniLM-L6-v2', got {spec[:60]!r}"
        )
    return "/".join(parts[:2]), "/".join(parts[2:]) or None


def candidates(file: str | None) -> list[str]:
    """Model files to try in order: the one asked for, else int8 for this machine, then fp32."""
    if file:
        return [file]
    int8 = INT8.get(platform.machine().lower())
    return ([int8] if int8 else []) + list(FULL)


def _why(repo: str, exc: Exception) -> str:
    """One line for a failed fetch."""
    from huggingface_hub import constants
    from huggingface_hub.errors import (
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    if isinstance(exc, RepositoryNotFoundError):
        return f"embedding model {repo!r} was not found on {constants.ENDPOINT}"
    if isinstance(exc, RevisionNotFoundError):
        return f"embedding model {repo!r} has no 'main' revision on {constants.ENDPOINT}"
    if isinstance(exc, LocalEntryNotFoundError):
        offline = getattr(constants, "is_offline_mode", lambda: constants.HF_HUB_OFFLINE)()
        how = "HF_HUB_OFFLINE is set" if offline else "the hub is unreachable"
        return f"embedding model {repo!r} is not in the cache ({constants.HF_HUB_CACHE}) and {how}"
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"embedding model {repo!r} could not be fetched: {first[:160]}"


def fetch(spec: str) -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) of a hub model, downloaded once into the hub cache."""
    repo, file = parse(spec)
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError
    except ImportError:
        raise ModelUnavailableError(
            "DIGESTBOT_EMBEDDING_MODEL needs huggingface-hub, which digestbot installs: reinstall it"
        ) from None
    tried: list[str] = []
    last: Exception | None = None
    try:
        tokenizer = Path(hf_hub_download(repo, "tokenizer.json"))
        for name in candidates(file):
            try:
                return Path(hf_hub_download(repo, name)), tokenizer
            except EntryNotFoundError as exc:  # not in this repo (or not cached): the next one
                tried.append(name)
                last = exc
    except Exception as exc:  # noqa: BLE001 - every hub or network failure becomes one line
        raise ModelUnavailableError(_why(repo, exc)) from None
    if isinstance(last, LocalEntryNotFoundError):
        raise ModelUnavailableError(_why(repo, last))
    raise ModelUnavailableError(f"embedding model {repo!r} has no {' or '.join(tried)}")
