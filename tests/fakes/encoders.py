"""Stand-ins for the embedding model: a unit vector per text, drawn from a hash of it.

``LoggedEncoder`` also writes one line per text it embeds (process id, text) to the file named by
``DIGESTBOT_TEST_EMBED_LOG``, so a test can count what every process, children included, embedded.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time

import numpy as np

LOG_ENV = "DIGESTBOT_TEST_EMBED_LOG"
#: Seconds the logged stand-in takes a text (a model's cost, so that workers overlap).
DELAY_ENV = "DIGESTBOT_TEST_EMBED_DELAY"


def vec(text: str) -> np.ndarray:
    """The stand-in's vector of ``text`` (equal texts, equal vectors)."""
    seed = int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)
    v = np.random.default_rng(seed).normal(size=384).astype(np.float32)
    return v / np.linalg.norm(v)


class HashEncoder:
    """Vectors from hashes; records the texts it was asked for; ``gate`` holds it (a slow model)."""

    key = "stand-in"

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.gate: threading.Event | None = None

    def encode(self, texts: list[str], **kw: object) -> np.ndarray:
        if self.gate is not None:
            self.gate.wait(10)
        self.calls += texts
        return np.stack([vec(t) for t in texts])


class LoggedEncoder(HashEncoder):
    """A HashEncoder that appends "pid<TAB>text" lines to the file named by $DIGESTBOT_TEST_EMBED_LOG."""

    def encode(self, texts: list[str], **kw: object) -> np.ndarray:
        time.sleep(float(os.environ.get(DELAY_ENV, "0")) * len(texts))
        out = super().encode(texts, **kw)
        with open(os.environ[LOG_ENV], "a", encoding="utf-8") as f:
            f.write("".join(f"{os.getpid()}\t{t.replace(chr(10), ' ')}\n" for t in texts))
        return out


def logged_lines(path: str) -> list[tuple[int, str]]:
    """(pid, text) of every text embedded so far, by any process."""
    try:
        with open(path, encoding="utf-8") as f:
            return [(int(p), t) for p, t in (line.rstrip("\n").split("\t", 1) for line in f)]
    except FileNotFoundError:
        return []
