"""How close distinct papers' abstracts come to the title-merge threshold (word-set Jaccard).

Prints, over every pair of distinct NeurIPS 2023 abstracts in the eval set, the highest
word-set Jaccard and how many pairs reach ``AGREE_JACCARD``: two different papers sharing a title
would be merged only if their abstracts came that close.
"""

from __future__ import annotations

import json

import numpy as np
from scipy import sparse

from bench.common import EVAL_DIR
from digest.store.identity import AGREE_JACCARD, _words


def main() -> None:
    """Print the highest Jaccard between distinct abstracts and the pairs at the threshold."""
    texts = [json.loads(line).get("abstract") or "" for line in (EVAL_DIR / "papers.jsonl").open()]
    sets = [_words(t) for t in texts if len(t) > 100]  # real abstracts, not stray URLs
    vocab = {w: i for i, w in enumerate(sorted(set().union(*sets)))}
    rows = [i for i, s in enumerate(sets) for _ in s]
    cols = [vocab[w] for s in sets for w in s]
    x = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(sets), len(vocab)))
    inter = (x @ x.T).toarray()
    sizes = np.array([len(s) for s in sets], dtype=float)
    jac = inter / (sizes[:, None] + sizes[None, :] - inter)
    np.fill_diagonal(jac, 0.0)
    upper = jac[np.triu_indices(len(sets), 1)]
    print(f"abstracts: {len(sets)}, pairs: {upper.size}")
    print(f"highest Jaccard between distinct abstracts: {upper.max():.3f}")
    print(f"99.99th percentile: {np.percentile(upper, 99.99):.3f}")
    print(f"pairs at or above {AGREE_JACCARD}: {(upper >= AGREE_JACCARD).sum()}")


if __name__ == "__main__":
    main()
