"""Term counting for the index: whole batches of papers become integer CSR matrices at once.

The terms are exactly those of ``analyzer.phrase_terms`` (tests compare the two), but a batch is
scanned with one regular expression, each distinct word is analysed once, and phrases and counts
are formed with numpy: per-token Python work was most of the index build's CPU time.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed
from scipy import sparse

from digest.rank.analyzer import COMPOUND, CONJUNCTIONS, OPTIONS, fold, term_of

_SEP = "\x01"  # ends each paper in a batch; no word or clause mark contains it
_SCAN = re.compile(r"[^\W_]+|[.,;:()\[\]!?\"]|\x01")  # analyzer's words and breaks, plus _SEP
BREAK, SKIP, DOC = -1, -2, -3  # codes of non-terms: phrase break, stop word, end of paper
BATCH = 5_000  # papers scanned at once: bounds the memory of the token lists


@dataclass
class Counts:
    """Title and abstract term counts over one vocabulary, and readable forms of title words."""

    terms: list[str]
    title: sparse.csr_matrix
    abstract: sparse.csr_matrix
    surface: dict[str, str]


class _Coder:
    """Word -> code (a unigram id or a non-term code), term keys -> columns; one per counting run."""

    def __init__(self, vocab: dict[str, int], grow: bool) -> None:
        self.code: dict[str, int] = dict.fromkeys('.,;:()[]!?"', BREAK)
        self.code[_SEP] = DOC
        self.unigrams: list[str] = []
        self.uid: dict[str, int] = {}
        self.col: dict[int, int] = {}  # term key -> column, -1 for unknown (fixed vocabulary)
        self.vocab, self.grow = vocab, grow

    def unigram(self, term: str) -> int:
        """Id of a single-word term."""
        i = self.uid.get(term)
        if i is None:
            i = self.uid[term] = len(self.unigrams)
            self.unigrams.append(term)
        return i

    def codes(self, toks: list[str]) -> np.ndarray:
        """Code of every token; each new distinct word is analysed once."""
        for w in set(toks).difference(self.code):
            t = term_of(w)
            if t:
                self.code[w] = self.unigram(t)
            else:  # 'datasets and benchmarks' is two topics; 'learning on graphs' one phrase
                self.code[w] = BREAK if OPTIONS.conj_breaks_phrase and w in CONJUNCTIONS else SKIP
        return np.fromiter(map(self.code.__getitem__, toks), np.int64, len(toks))

    def columns(self, keys: list[int]) -> np.ndarray:
        """Column of each term key (keys in first-occurrence order; new terms appended)."""
        out = np.empty(len(keys), dtype=np.int64)
        get = self.col.get
        for j, k in enumerate(keys):
            c = get(k)
            if c is None:
                term = self.term(k)
                c = self.vocab.get(term, -1)
                if c < 0 and self.grow:
                    c = self.vocab[term] = len(self.vocab)
                self.col[k] = c
            out[j] = c
        return out

    def term(self, key: int) -> str:
        """The string of a term key: a unigram id, or a pair of them for a phrase."""
        if key < 1 << 32:
            return self.unigrams[key]
        a, b = divmod(key, 1 << 32)
        return f"{self.unigrams[a - 1]} {self.unigrams[b]}"


_HYPHENED = re.compile(r"-[a-z0-9]+-")  # starts with a literal: the regex engine skips ahead fast
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def compounds(lower: str) -> list[tuple[int, str]]:
    """(start, text) of what ``COMPOUND.finditer`` finds, testing only around '-x-' spans."""
    out: list[tuple[int, str]] = []
    end = 0
    for cand in _HYPHENED.finditer(lower):
        if cand.start() < end:
            continue  # inside the compound just found
        r = cand.start()
        while r > 0 and lower[r - 1] in _ALNUM:
            r -= 1  # back to the start of the word before the first hyphen
        m = COMPOUND.match(lower, r if r < cand.start() else r + 1)
        if m:
            out.append((m.start(), m.group()))
            end = m.end()
    return out


def _events(lower: str, coder: _Coder) -> tuple[np.ndarray, np.ndarray]:
    """(term key, paper) of every term ``phrase_terms`` yields for the batch, in its order."""
    codes = coder.codes(_SCAN.findall(lower))
    codes = codes[codes != SKIP]  # stop words vanish; phrases form across them
    is_term = codes >= 0
    ends = codes == DOC
    paper = np.repeat(np.cumsum(ends) - ends, 2)
    # Two slots per token, as phrase_terms emits them: the word, then the phrase it closes.
    keys = np.full(2 * len(codes), -1, dtype=np.int64)
    keys[0::2][is_term] = codes[is_term]
    pair = np.flatnonzero(is_term[1:] & is_term[:-1]) + 1
    keys[2 * pair + 1] = ((codes[pair - 1] + 1) << 32) + codes[pair]
    found = compounds(lower)
    if found:  # 'out-of-distribution' kept whole, after the paper's other terms (its end slot)
        starts = np.array([m.start() for m in re.finditer(_SEP, lower)])
        where = np.searchsorted(starts, [s for s, _ in found])
        at = 2 * np.flatnonzero(ends)[where]
        extra = [coder.unigram(term_of(c.replace("-", ""))) for _, c in found]
        keys, paper = np.insert(keys, at, extra), np.insert(paper, at, paper[at])
    ok = keys >= 0
    return keys[ok], paper[ok]


def _count_batch(texts: Sequence[str], coder: _Coder) -> sparse.csr_matrix:
    """Term counts of one batch of texts, columns in the coder's vocabulary."""
    joined = _SEP.join(t.replace(_SEP, " ") for t in texts) + _SEP
    keys, papers = _events(fold(joined), coder)
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    by_first = np.argsort(first)  # new terms get columns in order of first appearance
    cols = np.empty(len(uniq), dtype=np.int64)
    cols[by_first] = coder.columns(uniq[by_first].tolist())
    cols = cols[inverse.ravel()]
    ok = cols >= 0
    ones = np.ones(int(ok.sum()), dtype=np.float32)
    m = sparse.csr_matrix((ones, (papers[ok], cols[ok])), shape=(len(texts), len(coder.vocab)))
    m.sum_duplicates()
    return m


def _count(texts: Sequence[str], coder: _Coder) -> list[sparse.csr_matrix]:
    return [_count_batch(texts[i : i + BATCH], coder) for i in range(0, len(texts), BATCH)]


def _widen(ms: list[sparse.csr_matrix], width: int) -> sparse.csr_matrix:
    """Stack batches counted while the vocabulary grew, all at its final width."""
    ms = [sparse.csr_matrix((m.data, m.indices, m.indptr), shape=(m.shape[0], width)) for m in ms]
    if not ms:
        return sparse.csr_matrix((0, width), dtype=np.float32)
    return sparse.vstack(ms, format="csr")


def surface_forms(titles: Sequence[str]) -> dict[str, str]:
    """Readable word for each stem: its most frequent plain form in titles ('diffusion')."""
    words = Counter(w.strip(".,:;()[]'\"!?") for w in " ".join(titles).lower().split())
    seen = [(term_of(w), w, n) for w, n in words.items() if w.isalnum()]
    # Most frequent first; ties keep first appearance ('q-dm' or '3d-cnn' never qualify).
    seen = sorted((x for x in seen if x[0]), key=lambda x: -x[2])
    surface: dict[str, str] = {}
    for stem, word, _ in seen:
        surface.setdefault(stem, word)
    return surface


def count_chunk(
    titles: Sequence[str], abstracts: Sequence[str], vocab: dict[str, int] | None = None
) -> Counts:
    """Counts for one batch; with ``vocab`` the vocabulary is fixed, otherwise it is built here."""
    grow = vocab is None
    coder = _Coder({} if vocab is None else vocab, grow)
    t, a = _count(titles, coder), _count(abstracts, coder)
    width = len(coder.vocab)
    terms = list(coder.vocab) if grow else []
    return Counts(terms, _widen(t, width), _widen(a, width), surface_forms(titles))


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
