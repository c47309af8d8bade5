"""Which query terms a paper matches, and how much each adds: the words of a why-line. No I/O."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from digest.rank.analyzer import family_key, term_of
from digest.rank.index import PaperIndex


@dataclass(frozen=True)
class Query:
    """A topic compiled against an index: weighted term columns and a latent direction."""

    text: str
    terms: tuple[str, ...]
    cols: np.ndarray
    weights: np.ndarray
    ideal: float
    latent: np.ndarray
    shown: dict[str, str] = field(default_factory=dict)  # stem -> the word the user typed
    words: int = 0  # distinct content words the user typed
    # Per column, True for a generic term ('model'): a paper matching only those is no match
    # while the query has a specific term. None: every column counts (votes' borrowed words).
    generic: np.ndarray | None = None
    cache: dict = field(default_factory=dict, compare=False, repr=False)  # per-query why-line data


def contributions(index: PaperIndex, q: Query, rows: np.ndarray) -> np.ndarray:
    """Each query term's share of each row's lexical score, rows x terms (one search per column)."""
    m = index.weights
    rows = np.asarray(rows, dtype=np.int64)
    if not len(rows) or not len(q.cols) or not m.nnz:
        return np.zeros((len(rows), len(q.cols)), dtype=np.float32)
    starts, ends = m.indptr[q.cols], m.indptr[q.cols + 1]
    # Rows in the indices' own type: with int64 rows numpy would first copy each (int32) column
    # to int64, a pass over every paper that has the term, for ten lookups.
    keys = rows.astype(m.indices.dtype) if rows.max() <= np.iinfo(m.indices.dtype).max else rows
    # One binary search per column in Python; the rest is done for all columns at once.
    pos = np.empty((len(q.cols), len(rows)), dtype=np.int64)
    indices = m.indices
    for j, (s, e) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        pos[j] = indices[s:e].searchsorted(keys)
    pos += starts[:, None]
    # Stays inside its own column (an empty column's -1 reads the last entry, masked below).
    pos = np.minimum(pos, (ends - 1)[:, None])
    found = (m.indices[pos] == rows) & (ends > starts)[:, None]
    # float32 data times the (float64) weights, rounded to float32 once, as before.
    shares = np.where(found, m.data[pos] * q.weights[:, None], 0.0)
    return np.ascontiguousarray(shares.T, dtype=np.float32)


def _term_table(index: PaperIndex, q: Query) -> tuple[list[bool] | None, list[str | None]]:
    """(phrase flags, None if a query term is unknown; each column's term), once per query."""
    if "terms" not in q.cache and len(names := q.cache.get("names", ())) == len(q.cols):
        q.cache["terms"] = ([" " in t for t in names], list(names))  # compile_query's, in order
    if "terms" not in q.cache:
        vocab = index.vocab
        known = [t for t in q.terms if t in vocab]
        inv = {vocab[t]: t for t in known}
        cols = q.cols.tolist()
        phrase = [" " in t for t in known] if len(known) == len(cols) else None
        q.cache["terms"] = (phrase, [inv.get(c) for c in cols])
    return q.cache["terms"]


def matched_terms(
    index: PaperIndex,
    q: Query,
    row: int,
    limit: int = 3,
    render: Callable[[str], str] | None = None,
    contrib: np.ndarray | None = None,
) -> list[str]:
    """The query terms that contribute most to paper ``row``'s lexical score, as readable words."""
    if contrib is None:
        contrib = contributions(index, q, np.array([row]))[0]
    phrase, names = _term_table(index, q)
    # Phrases first: 'sparse autoencoder' says more than 'autoencoder' and 'sparse' apart.
    vals = contrib.tolist()
    if phrase is not None:  # a stable sort, as np.lexsort; in Python for ~20 terms
        # Only terms the paper has can be named: sorting just those keeps their order.
        hit = [i for i, v in enumerate(vals) if v > 0]
        order = sorted(hit, key=lambda i: (not phrase[i], -vals[i]))
    else:
        order = np.argsort(-contrib).tolist()
    out: list[str] = []
    for i in order:
        if len(out) >= limit:
            break
        term = names[i] if vals[i] > 0 else None
        if term is None:
            continue
        # The corpus's usual form: the paper has this word (a typed 'models' may read 'model' there).
        _add(out, render(term) if render else term, typed_text(q))
    return out[:limit]


def typed_text(q: Query) -> str:
    """The query as typed, lower-cased and single-spaced (what ``_add`` looks phrases up in)."""
    return " ".join(q.text.lower().split())


def _add(out: list[str], shown: str, typed: str) -> None:
    """Add ``shown`` to a why-line's words unless they already say it: inside another word or
    phrase there, another spelling of a word there ('modeling' beside 'modelling'), or the other
    half of a phrase typed whole ('graph neural' and 'neural networks': 'graph neural networks').
    ``typed``: ``typed_text`` of the query."""
    if any(shown in o or o in shown for o in out):
        return
    words = shown.split()
    for i, other in enumerate(out):
        have = other.split()
        for a, b in ((have, words), (words, have)):
            for k in range(min(len(a), len(b)) - 1, 0, -1):  # a's last k words start b
                whole = " ".join(a + b[k:])
                if a[-k:] == b[:k] and whole.lower() in typed:
                    out[i] = whole
                    return
    if len(words) == 1:
        family = family_key(term_of(shown.lower()))
        if any(" " not in o and family_key(term_of(o.lower())) == family for o in out):
            return
    out.append(shown)


def matched_many(
    index: PaperIndex,
    q: Query,
    shares: np.ndarray,
    render: Callable[[str], str],
    limit: int = 3,
) -> list[list[str]]:
    """``matched_terms`` of each row of ``shares`` (a page's), sorted for the whole page at once."""
    phrase, names = _term_table(index, q)
    if phrase is None or not shares.size:
        return [matched_terms(index, q, 0, limit, render, contrib=s) for s in shares]
    # Terms the paper has, phrases first, larger shares first; ties in column order (stable).
    later = np.broadcast_to(~np.array(phrase, dtype=bool), shares.shape)
    order = np.lexsort((-shares, later, shares <= 0)).tolist()
    out, typed = [], typed_text(q)  # once a page
    for vals, cols in zip(shares.tolist(), order, strict=True):
        got: list[str] = []
        for i in cols:
            if vals[i] <= 0 or len(got) >= limit:
                break
            if (term := names[i]) is None:
                continue
            _add(got, render(term), typed)
        out.append(got)
    return out
