"""Term counting for the index: streams papers into integer CSR matrices, never keeping term lists."""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed
from scipy import sparse

from digest.rank.analyzer import phrase_terms


@dataclass
class Counts:
    """Title and abstract term counts over one vocabulary, and readable forms of title words."""

    terms: list[str]
    title: sparse.csr_matrix
    abstract: sparse.csr_matrix
    surface: dict[str, str]


def _rows(texts: list[str], vocab: dict[str, int], grow: bool) -> tuple[array, array, array]:
    indptr, indices, data = array("q", [0]), array("i"), array("f")
    for text in texts:
        row: dict[int, int] = {}
        for term in phrase_terms(text):
            col = vocab.get(term)
            if col is None:
                if not grow:
                    continue  # a fitted index ignores words it has never seen
                col = vocab[term] = len(vocab)
            row[col] = row.get(col, 0) + 1
        indices.extend(row.keys())
        data.extend(row.values())
        indptr.append(len(indices))
    return indptr, indices, data


def surface_forms(titles: list[str]) -> dict[str, str]:
    """Readable word for each stem: its most frequent plain form in titles ('diffusion')."""
    seen: Counter[tuple[str, str]] = Counter()
    for title in titles:
        for word in title.lower().split():
            w = word.strip(".,:;()[]'\"!?")
            if not w.isalnum():
                continue  # 'q-dm' or '3d-cnn' would read oddly in an explanation
            stems = phrase_terms(w)
            if len(stems) == 1:
                seen[(stems[0], w)] += 1
    surface: dict[str, str] = {}
    for (stem, word), _ in seen.most_common():
        surface.setdefault(stem, word)
    return surface


def count_chunk(
    titles: list[str], abstracts: list[str], vocab: dict[str, int] | None = None
) -> Counts:
    """Counts for one batch; with ``vocab`` the vocabulary is fixed, otherwise it is built here."""
    grow = vocab is None
    vocab = {} if vocab is None else vocab
    t = _rows(titles, vocab, grow)
    a = _rows(abstracts, vocab, grow)

    def csr(parts: tuple[array, array, array]) -> sparse.csr_matrix:
        indptr, indices, data = (np.frombuffer(x, dtype=x.typecode) for x in parts)
        return sparse.csr_matrix(
            (data.astype(np.float32), indices, indptr), shape=(len(indptr) - 1, len(vocab))
        )

    return Counts(list(vocab) if grow else [], csr(t), csr(a), surface_forms(titles))


def count_corpus(titles: Sequence[str], abstracts: Sequence[str], workers: int = 1) -> Counts:
    """Counts for a whole corpus; large ones are counted in parallel chunks and merged."""
    n = len(titles)
    if workers <= 1 or n < 20_000:
        return count_chunk(list(titles), list(abstracts))
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

    def stack(ms: list[sparse.csr_matrix]) -> sparse.csr_matrix:
        ms = [
            sparse.csr_matrix((m.data, m.indices, m.indptr), shape=(m.shape[0], len(vocab)))
            for m in ms
        ]
        return sparse.vstack(ms, format="csr")

    return Counts(
        list(vocab), stack([p.title for p in parts]), stack([p.abstract for p in parts]), surface
    )
