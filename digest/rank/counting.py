"""Term counting for the index: whole batches of papers become integer CSR matrices at once.

The terms are exactly those of ``analyzer.phrase_terms`` (tests compare the two), but a batch is
scanned at once (``scan``) and counted with numpy: per-token Python work was most of the index
build's CPU time.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed
from scipy import sparse

from digest.rank.analyzer import fold, term_of
from digest.rank.scan import SEP, Coder, events

BATCH = 1_000  # papers scanned at once: bounds the memory of the token lists


@dataclass
class Counts:
    """Title and abstract term counts over one vocabulary, and readable forms of title words."""

    terms: list[str]
    title: sparse.csr_matrix
    abstract: sparse.csr_matrix
    surface: dict[str, str]


def _count_batch(texts: Sequence[str], coder: Coder) -> sparse.csr_matrix:
    """Term counts of one batch of texts, columns in the coder's vocabulary."""
    joined = SEP.join(texts) + SEP
    if joined.count(SEP) != len(texts):  # a paper holding the separator itself: blank it out
        joined = SEP.join(t.replace(SEP, " ") for t in texts) + SEP
    keys, papers = events(fold(joined), coder)
    cols = coder.columns(keys)
    ok = cols >= 0
    ones = np.ones(int(ok.sum()), dtype=np.float32)
    m = sparse.csr_matrix((ones, (papers[ok], cols[ok])), shape=(len(texts), len(coder.vocab)))
    m.sum_duplicates()
    return m


class _Sink:
    """CSR arrays that grow in place (array.array reallocates without a second full copy)."""

    def __init__(self) -> None:
        self.indptr, self.indices, self.data = array("q", [0]), array("i"), array("f")

    def add(self, m: sparse.csr_matrix) -> None:
        """Append the rows of one counted batch."""
        self.indptr.extend((m.indptr[1:] + len(self.indices)).tolist())
        self.indices.frombytes(m.indices.astype(np.int32).tobytes())
        self.data.frombytes(m.data.astype(np.float32).tobytes())

    def matrix(self, width: int) -> sparse.csr_matrix:
        """The rows so far as one matrix of ``width`` columns (no copy of the arrays)."""
        parts = (self.indptr, self.indices, self.data)
        indptr, indices, data = (np.frombuffer(x, dtype=x.typecode) for x in parts)
        return sparse.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, width))


def _count(texts: Sequence[str], coder: Coder) -> _Sink:
    sink = _Sink()
    for i in range(0, len(texts), BATCH):
        sink.add(_count_batch(texts[i : i + BATCH], coder))
    return sink


def _widen(ms: list[sparse.csr_matrix], width: int) -> sparse.csr_matrix:
    """Stack counted parts whose vocabulary was merged afterwards, at the final width."""
    sink = _Sink()
    for m in ms:
        sink.add(m)
    return sink.matrix(width)


def surface_forms(titles: Sequence[str]) -> dict[str, str]:
    """Readable word for each stem: its most frequent plain form in titles ('diffusion')."""
    words: Counter[str] = Counter()
    # Distinct raw words stripped once each; Counter keeps first appearance, as the ties need.
    for w, n in Counter(" ".join(titles).lower().split()).items():
        words[w.strip(".,:;()[]'\"!?")] += n
    seen = [(term_of(w), w, n) for w, n in words.items() if w.isalnum()]
    # Most frequent first; ties keep first appearance ('q-dm' or '3d-cnn' never qualify).
    seen = sorted((x for x in seen if x[0]), key=lambda x: -x[2])
    surface: dict[str, str] = {}
    for stem, word, _ in seen:
        surface.setdefault(stem, word)
    return surface


def count_chunk(
    titles: Sequence[str],
    abstracts: Sequence[str],
    vocab: dict[str, int] | None = None,
    extend: bool = False,
) -> Counts:
    """Counts for one batch; with ``vocab`` the vocabulary is fixed (``extend``: new terms get
    columns after its own, in a copy), otherwise it is built here."""
    grow = vocab is None or extend
    coder = Coder(dict(vocab or {}), grow)
    t, a = _count(titles, coder), _count(abstracts, coder)
    width = len(coder.vocab)
    terms = list(coder.vocab) if grow else []
    return Counts(terms, t.matrix(width), a.matrix(width), surface_forms(titles))


def count_corpus(titles: Sequence[str], abstracts: Sequence[str], workers: int = 1) -> Counts:
    """Counts for a whole corpus; large ones are counted in parallel chunks and merged."""
    n = len(titles)
    if workers <= 1 or n < 20_000:
        return count_chunk(titles, abstracts)
    size = -(-n // (workers * 4))
    parts = Parallel(n_jobs=workers)(
        delayed(count_chunk)(list(titles[i : i + size]), list(abstracts[i : i + size]))
        for i in range(0, n, size)
    )
    vocab: dict[str, int] = {}
    surface: dict[str, str] = {}
    for part in parts:
        remap = np.array([vocab.setdefault(t, len(vocab)) for t in part.terms], dtype=np.int32)
        for m in (part.title, part.abstract):
            m.indices = remap[m.indices] if len(remap) else m.indices
        for k, v in part.surface.items():
            surface.setdefault(k, v)
    return Counts(
        list(vocab),
        _widen([p.title for p in parts], len(vocab)),
        _widen([p.abstract for p in parts], len(vocab)),
        surface,
    )
