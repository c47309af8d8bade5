"""A search page's why-lines from the fast path read exactly as the plain code wrote them.

The plain code is kept verbatim in tests/support/why_reference.py; each search's hits (ids, scores,
why-lines) must equal hits rebuilt with it, on the bundled corpus and on the synthetic one.

Breaks that turn these red (tried): `contributions` clipping positions to the last column's end
instead of each column's own (a neighbouring column's share leaks in); `contributions` not
masking empty columns; `contributions` rounding the weights to float16 before multiplying;
`matched_terms` sorting matched terms by score alone (phrases no longer first); `distinct`
taking the last option of the highest idf (`>=`) instead of the first; `distinct` naming a
phrase one of whose words the topic has; `title_phrases` reading a phrase made of one title's
last word and the next title's first; `matched_many` ordering by share alone (phrases no longer
first) or in reverse; `page_why` giving the lexical lines to the wrong papers when some of the
page came by meaning; `contributions` casting the rows to a type too small for them (int16);
`compile_query` listing its column terms out of column order.
"""

from __future__ import annotations

import re
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import sparse

from digest import BUNDLED_PAPERS
from digest.index.lifecycle import doc_input
from digest.ingest.parse import parse_neurips_list
from digest.rank.analyzer import term_of
from digest.rank.index import build_index
from digest.rank.matching import contributions, matched_many, matched_terms
from digest.rank.ranker import Ranker
from digest.rank.results import Hit
from digest.rank.scorer import score
from digest.rank.semantic import DenseState
from digest.rank.why import _renderer, distinct, page_why, title_phrases
from tests.support import why_reference as ref
from tests.support.corpus import GNN_HETEROPHILY, GNN_MOLECULES, TOPICS, synthetic_records


def _queries(titles: list[str], n: int = 60) -> list[str]:
    """Topic phrases, title word pairs and single title words, plurals and typos included."""
    words = [[w for w in re.findall(r"[^\W_]+", t.lower()) if term_of(w)] for t in titles]
    pairs = [" ".join(w[:2]) for w in words if len(w) >= 2]
    singles = [w[-1] for w in words if w]
    phrases = [p.split(" (")[0] for ps in TOPICS.values() for p in ps]
    later = [" ".join(w[1:4]) for w in words if len(w) >= 3]  # three words, mid-title
    mixed = (
        phrases
        + GNN_MOLECULES
        + GNN_HETEROPHILY
        + ["models", "graph nets", "llm", "learning human"]
    )
    for more in (pairs, later, singles):
        mixed += list(dict.fromkeys(more))[: max(1, len(more) // 15) * 15 : max(1, len(more) // 15)]
    return list(dict.fromkeys(mixed))[:n]


@pytest.fixture(scope="module", params=["bundled", "synthetic"])
def index(request):
    if request.param == "bundled":
        records = parse_neurips_list(BUNDLED_PAPERS.read_text(encoding="utf-8")).records
    else:
        records = synthetic_records()
    return build_index([doc_input(r) for r in records])


def _plain_hits(ranker: Ranker, text: str, page: int, per_page: int) -> tuple[Hit, ...]:
    """The page's hits with why-lines written by the reference code."""
    bare = ranker.search(text, page=page, per_page=per_page, explain=False)
    st, ix = ranker.state(text), ranker.index
    if st is None or not bare.hits:
        return bare.hits
    rows, scores = score(ix, st, None, ranker.params)
    fused = dict(zip(rows.tolist(), scores.tolist(), strict=True))
    page_rows = np.array([ix.pos[h.paper_id] for h in bare.hits])
    shares = ref.contributions(ix, st.query, page_rows)
    return tuple(
        Hit(h.paper_id, h.score, ref.topic_why(ix, text, st, int(r), fused[r], shares[k]))
        for k, (h, r) in enumerate(zip(bare.hits, page_rows.tolist(), strict=True))
    )


def test_search_pages_read_as_the_plain_code_wrote_them(index):
    queries = _queries(index.titles)
    assert len(queries) >= 40
    named = 0
    for text in queries:
        for page, per_page in ((1, 10), (2, 7)):
            fast = Ranker(index).search(text, page=page, per_page=per_page)
            assert fast.hits == _plain_hits(Ranker(index), text, page, per_page), text
            named += sum("; on " in h.why for h in fast.hits)
    assert named > 50  # the title-phrase part of the line was exercised, not always empty


def test_shares_equal_the_plain_computation_bit_for_bit(index):
    ranker, rng = Ranker(index), np.random.default_rng(0)
    for text in _queries(index.titles)[:20]:
        st = ranker.state(text)
        if st is None:
            continue
        rows = rng.choice(len(index), size=min(25, len(index)), replace=False)
        # Rows that match, and the rows just past each term's column (the neighbour's first).
        m, cols = index.weights, st.query.cols
        after = m.indices[np.minimum(m.indptr[cols + 1], m.nnz - 1)]
        rows = np.concatenate([rows, np.flatnonzero(st.lex > 0)[:10], after, [len(index) - 1]])
        fast, plain = contributions(index, st.query, rows), ref.contributions(index, st.query, rows)
        assert fast.dtype == plain.dtype and fast.shape == plain.shape
        assert fast.tobytes() == plain.tobytes(), text


def test_title_phrase_is_the_plain_choice_for_any_words_to_skip(index):
    rng = np.random.default_rng(1)
    vocab_words = [t for t in index.vocab if " " not in t]
    for row in range(0, len(index), max(1, len(index) // 150)):
        title_terms = [
            t for w in re.findall(r"[^\W_]+", index.titles[row].lower()) if (t := term_of(w))
        ]
        for skip in (
            set(),
            set(title_terms[:1]),
            set(title_terms[1::2]),
            set(rng.choice(vocab_words, 30)),
        ):
            assert distinct(index, row, skip) == ref.distinct(index, row, skip), (row, skip)


def test_shares_on_awkward_matrices_equal_the_plain_computation():
    """Empty columns, and columns whose rows all come before the next column's first row."""
    rng = np.random.default_rng(2)
    for _ in range(30):
        dense = rng.random((40, 12)) * (rng.random((40, 12)) < 0.2)
        dense[:, rng.integers(0, 12, 3)] = 0.0  # empty columns
        dense[20:, 5], dense[:30, 6] = 0.0, 0.0  # column 5 ends early; column 6 starts late
        m = sparse.csc_matrix(dense.astype(np.float32))
        m.sort_indices()
        ix = SimpleNamespace(weights=m)
        cols = rng.choice(12, size=8, replace=False)
        q = SimpleNamespace(cols=np.append(cols, [5, 6]), weights=rng.random(10).astype(np.float32))
        rows = np.arange(40)
        assert contributions(ix, q, rows).tobytes() == ref.contributions(ix, q, rows).tobytes()


def test_a_page_of_title_phrases_is_each_title_on_its_own(index):
    """Titles are read as one page; a phrase across two titles' boundary is never named."""
    rng = np.random.default_rng(3)
    terms = [
        [t for w in re.findall(r"[^\W_]+", title.lower()) if (t := term_of(w))]
        for title in index.titles
    ]
    firsts: dict[str, int] = {}  # a title's first term -> one title starting with it
    for row, ts in enumerate(terms):
        if ts:
            firsts.setdefault(ts[0], row)
    # Pages whose neighbouring titles form a known phrase at their boundary ('... graph' + 'neural ...').
    seams = [
        (a, b)
        for a in range(min(len(index), 400))
        for first, b in firsts.items()
        if terms[a] and f"{terms[a][-1]} {first}" in index.vocab
    ]
    pages = [list(p) for p in seams[:200]]
    pages += [rng.choice(len(index), 10).tolist() for _ in range(30)]
    for rows in pages:
        for skip in (set(), {"graph", "model", "learn"}):
            want = [ref.distinct(index, r, skip) for r in rows]
            assert title_phrases(index, rows, skip) == want, (rows, skip)


def test_a_page_of_matched_terms_is_each_row_on_its_own(index):
    ranker = Ranker(index)
    for text in _queries(index.titles):
        st = ranker.state(text)
        if st is None:
            continue
        rows = np.concatenate([np.flatnonzero(st.lex > 0)[:12], [0, len(index) - 1]])
        shares = contributions(index, st.query, rows)
        render = _renderer(index, st.query)
        want = [
            matched_terms(index, st.query, int(r), render=render, contrib=c)
            for r, c in zip(rows, shares, strict=True)
        ]
        assert matched_many(index, st.query, shares, render) == want, text
        assert [
            ref.matched_terms(index, st.query, int(r), c) for r, c in zip(rows, shares, strict=True)
        ] == want


def test_a_page_partly_brought_by_meaning_reads_as_the_plain_code(index):
    """Lines 'close in meaning' and lines naming words are given to the right papers."""
    ranker, mixed = Ranker(index), 0
    for text in _queries(index.titles)[:25]:
        st = ranker.state(text)
        if st is None:
            continue
        st = replace(st, dense=DenseState(np.zeros(len(index), dtype=np.float32), 0.4))
        rows = np.flatnonzero(st.lex > 0)[:10]
        # A fused score far above the words' share: meaning brought it; near it: words did.
        fused = [float(st.lex[r]) * (10.0 if k % 3 == 1 else 1.1) for k, r in enumerate(rows)]
        shares = ref.contributions(index, st.query, rows)
        want = [
            ref.topic_why(index, text, st, int(r), f, shares[k])
            for k, (r, f) in enumerate(zip(rows, fused, strict=True))
        ]
        assert page_why(index, text, st, rows, fused) == want, text
        mixed += any("close in meaning" in w for w in want) and any("matches" in w for w in want)
    assert mixed >= 10


def test_shares_of_rows_beyond_the_int16_range_are_found():
    """Rows are searched in the indices' own type: large row numbers must survive the cast."""
    n = 200_000
    rows = np.array([5, 70_000, 150_000, n - 1])
    m = sparse.csc_matrix((np.ones(4, dtype=np.float32), (rows, [0, 0, 1, 1])), shape=(n, 2))
    q = SimpleNamespace(cols=np.array([0, 1]), weights=np.array([2.0, 3.0], dtype=np.float32))
    ix = SimpleNamespace(weights=m)
    got = contributions(ix, q, rows)
    assert got.tolist() == [[2.0, 0.0], [2.0, 0.0], [0.0, 3.0], [0.0, 3.0]]
    assert got.tobytes() == ref.contributions(ix, q, rows).tobytes()
