"""The LSA basis fit equals sklearn's randomized SVD (the code it replaced) to float32 precision."""

import numpy as np
import pytest
from scipy import sparse
from sklearn.utils import check_random_state
from sklearn.utils.extmath import randomized_svd, svd_flip

from digest.rank.lsa import fit_basis


def _sklearn_basis(m: sparse.csr_matrix, k: int, n_iter: int, seed: int) -> np.ndarray:
    """The index's former fit: sklearn's randomized SVD, signs from the term side."""
    u, _, vt = randomized_svd(
        m, k, n_iter=n_iter, flip_sign=False, random_state=check_random_state(seed)
    )
    return svd_flip(u, vt, u_based_decision=False)[1].astype(np.float32)


@pytest.mark.parametrize(("rows", "cols"), [(300, 900), (900, 300), (400, 400)])
@pytest.mark.parametrize("n_iter", [3, 4])
def test_basis_equals_sklearn_randomized_svd(rows, cols, n_iter):
    """Both sides of sklearn's transpose choice, square included, 3 and 4 power iterations.

    Breaks that go red: no sign flip (rows come out negated); the left factor taken as the basis
    when the matrix is transposed (wrong shape); another random start (different directions
    beyond the well-separated top ones); no power iterations."""
    rng = np.random.default_rng(0)
    # Decaying column weights give a spectrum with a clear top, as tf-idf rows have.
    dense = rng.random((rows, cols)) * (rng.random((rows, cols)) < 0.05)
    m = sparse.csr_matrix((dense * (1 / np.arange(1, cols + 1)) ** 0.5).astype(np.float32))
    k = 40
    ours, ref = fit_basis(m, k, n_iter, 7), _sklearn_basis(m, k, n_iter, 7)
    assert ours.shape == ref.shape == (k, cols) and ours.dtype == np.float32
    assert np.abs(ours - ref).max() < 1e-3


def test_row_means_equal_scipys_row_mean_with_repeats_and_empty_rows():
    """The one-pass row mean used by feedback equals scipy's ``m[rows].mean(axis=0)``.

    Breaks seen red: the groups' slices of the one read shifted by one row (start not advanced);
    a repeated row read once (rows deduplicated before the read)."""
    from digest.rank.index import row_means

    m = sparse.random(400, 60, density=0.05, format="csc", dtype=np.float32, random_state=2)
    m.sort_indices()
    words = np.diff(m.tocsr().indptr)
    empty = int(np.flatnonzero(words == 0)[0])  # a paper with no words
    a, b = (int(r) for r in np.flatnonzero(words > 0)[:2])
    for rows in ([a], [a, b], [a, a, b], [empty, b], list(range(0, 400, 17))):
        want = np.asarray(m[rows].mean(axis=0)).ravel()
        got, other = row_means(m, [rows, [b]])  # read together, averaged apart
        assert got.dtype == np.float32 and np.array_equal(got, want), rows
        assert np.array_equal(other, np.asarray(m[[b]].mean(axis=0)).ravel()), rows
