"""The LSA basis: sklearn's randomized SVD, with the cheaper steps this index can afford.

The random start, the power iterations (LU-normalised) and the orthonormal range are exactly
``sklearn.utils.extmath.randomized_svd``'s. Two steps differ: the small SVD of the projected
sample is taken through a QR of its transpose (the same factors to float32 precision, at less
than half the cost of LAPACK's SVD of the wide matrix), and the left factor, which the index
never reads, is not formed unless the terms are on that side.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg, sparse

OVERSAMPLES = 10  # sklearn's default: extra directions that make the top ones accurate


def _range(a: sparse.spmatrix, size: int, n_iter: int, rng: np.random.RandomState) -> np.ndarray:
    """Orthonormal basis of the range of ``a``, as sklearn's ``_randomized_range_finder``."""
    q = rng.normal(size=(a.shape[1], size)).astype(a.dtype, copy=False)
    for _ in range(n_iter):
        q = linalg.lu(a @ q, permute_l=True, check_finite=False)[0]
        q = linalg.lu(a.T @ q, permute_l=True, check_finite=False)[0]
    return linalg.qr(a @ q, mode="economic", check_finite=False)[0]


def _thin_svd(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(U, Vt) of a wide ``b`` (rows << columns), from the QR of ``b.T`` and a small SVD."""
    qb, r = linalg.qr(b.T, mode="economic", check_finite=False)
    w, _, zt = linalg.svd(r.T, check_finite=False)
    return w, zt @ qb.T


def _flip(v: np.ndarray) -> np.ndarray:
    """sklearn's ``svd_flip(u_based_decision=False)`` on ``v``: each row's largest entry > 0."""
    signs = np.sign(v[np.arange(len(v)), np.argmax(np.abs(v), axis=1)])
    return v * signs[:, None]


def fit_basis(m: sparse.csr_matrix, k: int, n_iter: int, seed: int) -> np.ndarray:
    """Top ``k`` right singular vectors of ``m`` (k x terms, float32), signs as sklearn's."""
    transpose = m.shape[0] < m.shape[1]  # sklearn's choice: the smaller side is sampled
    a = m.T if transpose else m
    from sklearn.utils import check_random_state  # here: importing sklearn costs a second

    q = _range(a, k + OVERSAMPLES, n_iter, check_random_state(seed))
    u, vt = _thin_svd(np.asarray(q.T @ a))
    basis = (q @ u[:, :k]).T if transpose else vt[:k]
    return _flip(basis).astype(np.float32)
