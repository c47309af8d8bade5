"""The fitted paper index: BM25F lexical weights, an LSA latent space and corpus acronyms. No I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import sparse

from digest.rank.analyzer import AcronymTable, families
from digest.rank.counting import count_chunk, count_corpus
from digest.rank.lsa import fit_basis


@dataclass(frozen=True)
class IndexParams:
    """Knobs of the index; defaults were chosen on the development set (see docs/benchmarks.md)."""

    title_weight: float = 3.0
    k1: float = 1.2
    b: float = 0.75
    n_components: int = 256
    latent_vocab: int = 40_000  # the LSA basis spans only the most frequent terms (memory, speed)
    svd_sample: int = 40_000
    svd_iter: int = 3  # power iterations of the randomized SVD (4 ranked the same, within 0.001)
    workers: int = 2  # processes for text analysis of large corpora
    refit_ratio: float = 1.5
    seed: int = 7


@dataclass(frozen=True)
class DocInput:
    """What the index needs of a paper."""

    id: str
    title: str
    abstract: str
    authors: tuple[str, ...] = ()
    venue: str | None = None
    year: int | None = None


@dataclass
class PaperIndex:
    """Everything the scorer reads; rows are papers in ``ids`` order."""

    params: IndexParams
    ids: list[str]
    vocab: dict[str, int]  # term -> column
    idf: np.ndarray
    weights: sparse.csc_matrix  # BM25F-saturated term weights times idf, docs x terms
    latent: np.ndarray  # unit-length LSA vectors, docs x k, float32
    basis: np.ndarray  # LSA basis over the latent vocabulary, k x L, float32
    latent_cols: np.ndarray  # term column of each latent-vocabulary entry
    latent_map: np.ndarray  # term column -> latent-vocabulary position, or -1
    avg_len: tuple[float, float]
    acronyms: AcronymTable
    titles: list[str]
    authors: list[tuple[str, ...]]
    venues: list[str]
    years: np.ndarray
    surface: dict[str, str]
    fitted_docs: int
    family: dict[str, tuple[str, ...]] = field(default_factory=dict)  # word family -> its terms
    # Columns a paper's length counts: terms several papers share. A word one paper alone has is
    # searchable but leaves the other papers' scores as they were without it. None: every column.
    counted: np.ndarray | None = None
    dense: np.ndarray | None = None  # sentence embeddings (semantic extra), docs x 384, or None
    has_dense: np.ndarray | None = None  # which rows of ``dense`` are real (computed so far)
    pos: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.pos = {pid: i for i, pid in enumerate(self.ids)}

    def __len__(self) -> int:
        return len(self.ids)

    def project(self, cols: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Unit latent vector of a weighted bag of term columns (terms outside the basis drop out)."""
        pos = self.latent_map[cols]
        keep = pos >= 0
        v = self.basis[:, pos[keep]] @ weights[keep]
        n = float(np.linalg.norm(v))
        return (v / n if n > 0 else v).astype(np.float32)

    def needs_refit(self) -> bool:
        """True when enough papers arrived since fitting that the vocabulary has likely drifted."""
        return len(self.ids) > self.params.refit_ratio * max(self.fitted_docs, 1)


def _row_scaled(m: sparse.csr_matrix, scale: np.ndarray) -> np.ndarray:
    """Data of ``diags(scale) @ m`` (float64), computed on the arrays directly."""
    return m.data * np.repeat(scale, np.diff(m.indptr))


def _bm25f(
    ct: sparse.csr_matrix,
    ca: sparse.csr_matrix,
    idf: np.ndarray,
    p: IndexParams,
    avg: tuple[float, float],
    counted: np.ndarray | None = None,
) -> sparse.csc_matrix:
    """Per-field length-normalised tf, title boosted, saturated once, times idf (BM25F); a
    paper's length counts the ``counted`` columns only (None: all of them)."""

    def norm(m: sparse.csr_matrix, avg_len: float, boost: float) -> sparse.csr_matrix:
        lens = field_lengths(m, counted)
        scale = 1.0 / (1 - p.b + p.b * lens / max(avg_len, 1e-9))
        return sparse.csr_matrix((_row_scaled(m, scale) * boost, m.indices, m.indptr), m.shape)

    tf = (norm(ct, avg[0], p.title_weight) + norm(ca, avg[1], 1.0)).tocsr()
    tf.data = tf.data * (p.k1 + 1) / (tf.data + p.k1) * idf[tf.indices]
    # float32 before the transposition, not after: half the data moved, no float64 CSC copy.
    tf.data = tf.data.astype(np.float32)
    weights = tf.tocsc()
    weights.sort_indices()  # the scorer binary-searches rows within a column
    return weights


def field_lengths(m: sparse.csr_matrix, counted: np.ndarray | None = None) -> np.ndarray:
    """Per row, the summed counts of the ``counted`` columns (a boolean mask; None: all)."""
    if counted is None:
        return np.asarray(m.sum(axis=1)).ravel()
    return np.asarray(m @ counted.astype(m.dtype)).ravel()


def select_columns(m: sparse.csr_matrix, cols: np.ndarray) -> sparse.csr_matrix:
    """``m[:, cols]`` for increasing ``cols``, by renumbering the stored entries."""
    remap = np.full(m.shape[1], -1, dtype=np.int32)
    remap[cols] = np.arange(len(cols), dtype=np.int32)
    new = remap[m.indices]
    keep = new >= 0
    before = np.zeros(len(keep) + 1, dtype=m.indptr.dtype)  # kept entries before each entry
    np.cumsum(keep, out=before[1:])
    return sparse.csr_matrix((m.data[keep], new[keep], before[m.indptr]), (m.shape[0], len(cols)))


def _tfidf_rows(ct: sparse.csr_matrix, ca: sparse.csr_matrix, idf: np.ndarray, p: IndexParams):
    """Sublinear, L2-normalised tf-idf rows for the latent space."""
    x = (ct * p.title_weight + ca).tocsr().astype(np.float32)
    x.data = 1 + np.log(x.data)
    x = x @ sparse.diags(idf.astype(np.float32))
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    return sparse.diags(1 / np.maximum(norms, 1e-9)) @ x


def _unit(m: np.ndarray) -> np.ndarray:
    """Rows of ``m`` scaled to unit length as float32; a float32 ``m`` is scaled in place."""
    n = np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)
    if m.dtype != np.float32:
        return (m / n).astype(np.float32)
    m /= n  # no second docs x k array (the callers' products are theirs alone)
    return m


def _fit_basis(xl: sparse.csr_matrix, p: IndexParams) -> np.ndarray:
    """The LSA basis, fitted on a sample of papers (enough to find the main directions)."""
    n = xl.shape[0]
    k = max(1, min(p.n_components, xl.shape[1] - 1, n - 1))
    sample = np.random.default_rng(p.seed).choice(n, size=min(n, p.svd_sample), replace=False)
    return fit_basis(xl[np.sort(sample)], k, p.svd_iter, p.seed)


def doc_freq(ct: sparse.csr_matrix, ca: sparse.csr_matrix, step: int = 10_000) -> np.ndarray:
    """Papers using each term in title or abstract; in row blocks, never a full sum matrix."""
    df = np.zeros(ct.shape[1], dtype=np.int64)
    for i in range(0, ct.shape[0], step):
        df += np.bincount((ct[i : i + step] + ca[i : i + step]).indices, minlength=len(df))
    return df


def row_means(weights: sparse.csc_matrix, groups: list[list[int]]) -> list[np.ndarray]:
    """The mean row of each group of rows (repeats count again), as dense float32 vectors.

    scipy reads rows of a CSC matrix by walking every stored entry (26 ms a call at 100k papers,
    0.3 s at 1M), so every group's rows are read in one call and averaged from that small copy.
    """
    both = [r for g in groups for r in g]
    sub = weights[both] if both else None
    out, start = [], 0
    for g in groups:
        part = sub[start : start + len(g)] if g else None
        out.append(
            np.asarray(part.mean(axis=0)).ravel().astype(np.float32)
            if part is not None
            else np.zeros(weights.shape[1], dtype=np.float32)
        )
        start += len(g)
    return out


def build_index(docs: Sequence[DocInput], params: IndexParams | None = None) -> PaperIndex:
    """Fit an index over ``docs`` (vocabulary, idf, LSA, acronyms)."""
    p = params or IndexParams()
    if not docs:
        raise ValueError("cannot index an empty corpus")
    n = len(docs)
    counts = count_corpus([d.title for d in docs], [d.abstract for d in docs], p.workers)
    df = doc_freq(counts.title, counts.abstract)
    # A phrase seen in one paper only is noise; a word is not: it may be the one word a new paper
    # is searched by, which an append (add_documents) keeps, so a refit must not drop it.
    phrase = np.fromiter((" " in t for t in counts.terms), bool, len(counts.terms))
    floor = 2 if n >= 50 else 1
    keep = np.flatnonzero((df >= floor) | ~phrase)
    vocab = {counts.terms[k]: i for i, k in enumerate(keep)}
    ct, ca = select_columns(counts.title, keep), select_columns(counts.abstract, keep)
    df = df[keep]
    surface = counts.surface
    del counts  # the unfiltered matrices are the largest thing built here
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
    counted = df >= floor
    avg = (float(field_lengths(ct, counted).sum()) / n, float(field_lengths(ca, counted).sum()) / n)
    weights = _bm25f(ct, ca, idf, p, avg, counted)
    # The latent space spans terms several papers share, as before single-paper words were kept.
    shared = np.flatnonzero(counted)
    shared = shared if len(shared) else np.arange(len(df))  # every word once: span them all
    latent_cols = np.sort(shared[np.argsort(-df[shared], kind="stable")[: p.latent_vocab]])
    xl = _tfidf_rows(
        select_columns(ct, latent_cols), select_columns(ca, latent_cols), idf[latent_cols], p
    )
    del ct, ca  # keep peak memory down before the SVD
    basis = _fit_basis(xl, p)
    latent_map = np.full(len(vocab), -1, dtype=np.int32)
    latent_map[latent_cols] = np.arange(len(latent_cols), dtype=np.int32)
    return PaperIndex(
        params=p,
        ids=[d.id for d in docs],
        vocab=vocab,
        idf=idf,
        weights=weights,
        latent=_unit(xl @ np.ascontiguousarray(basis.T)),
        basis=basis,
        latent_cols=latent_cols,
        latent_map=latent_map,
        avg_len=avg,
        acronyms=AcronymTable.mine(f"{d.title}. {d.abstract}" for d in docs),
        titles=[d.title for d in docs],
        authors=[tuple(a.lower() for a in d.authors) for d in docs],
        venues=[(d.venue or "").lower() for d in docs],
        years=np.array([d.year or 0 for d in docs], dtype=np.int32),
        surface=surface,
        fitted_docs=n,
        family=shared_families(vocab, counted),
        counted=counted,
    )


def shared_families(vocab: dict[str, int], counted: np.ndarray) -> dict[str, tuple[str, ...]]:
    """Word families of the terms several papers share: a query word's relative one paper alone
    uses would pull that paper up at a rare word's idf, which no fit ever did."""
    return families(t for t, c in vocab.items() if counted[c])


def _stack(old: sparse.csc_matrix, new: sparse.csc_matrix) -> sparse.csc_matrix:
    stacked = sparse.vstack([old, new]).tocsc()
    stacked.sort_indices()
    return stacked


def _widened(m: sparse.csc_matrix, width: int) -> sparse.csc_matrix:
    """``m`` with empty columns appended up to ``width`` (the arrays shared, not copied)."""
    extra = np.full(width - m.shape[1], m.indptr[-1], dtype=m.indptr.dtype)
    return sparse.csc_matrix(
        (m.data, m.indices, np.concatenate([m.indptr, extra])), shape=(m.shape[0], width)
    )


def _new_terms(index: PaperIndex, docs: Sequence[DocInput]):
    """Counts of ``docs`` over the fitted vocabulary plus the terms it lacks: every new word
    (a paper's new word is searchable at once), and new phrases two of ``docs`` share."""
    counts = count_chunk([d.title for d in docs], [d.abstract for d in docs], index.vocab, True)
    old = len(index.vocab)
    added = counts.terms[old:]
    df = doc_freq(counts.title, counts.abstract)[old:]
    keep = [old + i for i, t in enumerate(added) if df[i] >= (2 if " " in t else 1)]
    cols = np.concatenate([np.arange(old), np.array(keep, dtype=np.int64)])
    ct, ca = select_columns(counts.title, cols), select_columns(counts.abstract, cols)
    vocab = dict(index.vocab)
    for c in keep:
        vocab[counts.terms[c]] = len(vocab)
    return ct, ca, vocab, doc_freq(ct, ca)[old:], counts.surface


def add_documents(index: PaperIndex, docs: Sequence[DocInput]) -> PaperIndex:
    """A new index with ``docs`` appended, using the fitted idf and latent basis (no refit).

    Words the fit never saw get columns of their own, their idf from the papers now indexed
    (the fitted terms keep theirs); they stay outside the latent space until the next fit.
    The old index is left untouched, so rankers holding per-topic caches for it stay consistent.
    """
    docs = [d for d in docs if d.id not in index.pos]
    if not docs:
        return index
    ct, ca, vocab, df_new, surface = _new_terms(index, docs)
    n = len(index.ids) + len(docs)
    idf = np.concatenate(
        [index.idf, np.log(1 + (n - df_new + 0.5) / (df_new + 0.5)).astype(np.float32)]
    )
    p = index.params
    cols = index.latent_cols
    lat = _unit(
        _tfidf_rows(select_columns(ct, cols), select_columns(ca, cols), idf[cols], p)
        @ np.ascontiguousarray(index.basis.T)
    )
    # A new word counts towards lengths as a fit would count it: when several papers share it.
    fitted = index.counted if index.counted is not None else np.ones(len(index.vocab), dtype=bool)
    counted = np.concatenate([fitted, df_new >= (2 if n >= 50 else 1)])
    grown = len(vocab) > len(index.vocab)
    weights = _widened(index.weights, len(vocab)) if grown else index.weights
    latent_map = index.latent_map
    if grown:
        latent_map = np.concatenate(
            [latent_map, np.full(len(vocab) - len(index.vocab), -1, dtype=latent_map.dtype)]
        )
    return replace(
        index,
        ids=index.ids + [d.id for d in docs],
        vocab=vocab,
        idf=idf,
        latent_map=latent_map,
        family=shared_families(vocab, counted) if grown else index.family,
        weights=_stack(weights, _bm25f(ct, ca, idf, p, index.avg_len, counted)),
        counted=counted,
        latent=np.vstack([index.latent, lat]),
        titles=index.titles + [d.title for d in docs],
        authors=index.authors + [tuple(a.lower() for a in d.authors) for d in docs],
        venues=index.venues + [(d.venue or "").lower() for d in docs],
        years=np.concatenate([index.years, [d.year or 0 for d in docs]]).astype(np.int32),
        surface={**surface, **index.surface},
        dense=None,  # re-attached by the caller, which knows the stored embeddings
        has_dense=None,
    )


def paper_space(index: PaperIndex) -> np.ndarray:
    """Paper vectors for likeness: sentence embeddings when every paper has one, else LSA."""
    if index.dense is not None and index.has_dense is not None and index.has_dense.all():
        return index.dense
    return index.latent
