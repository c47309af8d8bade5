"""Batch scanning for term counting: a batch of papers becomes term keys in numpy arrays.

Every paper of a batch is scanned at once (one joined string, papers ended by a separator),
each distinct word is analysed once, and phrases are formed with numpy. The terms are exactly
those of ``analyzer.phrase_terms``, in the same order (tests compare the two).
"""

from __future__ import annotations

import re
import string
from itertools import groupby, repeat

import numpy as np

from digest.rank.analyzer import COMPOUND, CONJUNCTIONS, OPTIONS, term_of
from digest.rank.keytable import KeyTable

SEP = "\x01"  # ends each paper in a batch; no word or clause mark contains it
_BREAKS = '.,;:()[]!?"'
_SCAN = re.compile(r"[^\W_]+|[.,;:()\[\]!?\"]|\x01")  # analyzer's words and breaks, plus SEP
_KEEP = set(string.ascii_letters + string.digits + _BREAKS + SEP)
_BLANK = str.maketrans({chr(i): " " for i in range(128) if chr(i) not in _KEEP})
BREAK, SKIP, DOC, NEW = -1, -2, -3, -4  # non-terms: phrase break, stop word, paper end; unseen
_PHRASE = 1 << 32  # phrase keys are (first word + 1) * _PHRASE + second word


def _ascii_tokens(lower: str) -> list[str]:
    """``_SCAN.findall`` for ASCII text, by C string methods (about twice as fast)."""
    for c in _BREAKS + SEP:
        lower = lower.replace(c, f" {c} ")
    return lower.translate(_BLANK).split()


def scan(lower: str) -> list[str]:
    """Words, clause marks and paper ends of a folded batch; ASCII papers take the fast path."""
    if lower.isascii():
        return _ascii_tokens(lower)
    out: list[str] = []
    for ascii_only, papers in groupby(lower.split(SEP)[:-1], key=str.isascii):
        text = SEP.join(papers) + SEP
        out += _ascii_tokens(text) if ascii_only else _SCAN.findall(text)
    return out


class Coder:
    """Word -> code (a unigram id or a non-term code), term keys -> columns; one per counting run."""

    def __init__(self, vocab: dict[str, int], grow: bool) -> None:
        self.code: dict[str, int] = dict.fromkeys('.,;:()[]!?"', BREAK)
        self.code[SEP] = DOC
        self.unigrams: list[str] = []
        self.uid: dict[str, int] = {}
        self.col = KeyTable()  # phrase key -> column, -1 for unknown (fixed vocabulary)
        self.ucol = np.zeros(0, dtype=np.int64)  # word id -> column, -2 not yet looked up
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
        out = np.fromiter(map(self.code.get, toks, repeat(NEW)), np.int64, len(toks))
        new = np.flatnonzero(out == NEW).tolist()  # no set of the whole batch: few words are new
        for w in {toks[i] for i in new}:
            t = term_of(w)
            if t:
                self.code[w] = self.unigram(t)
            else:  # 'datasets and benchmarks' is two topics; 'learning on graphs' one phrase
                self.code[w] = BREAK if OPTIONS.conj_breaks_phrase and w in CONJUNCTIONS else SKIP
        if new:
            out[new] = [self.code[toks[i]] for i in new]
        return out

    def columns(self, keys: np.ndarray) -> np.ndarray:
        """Column of each term key (-1: not in a fixed vocabulary); new terms get the next columns."""
        if len(self.ucol) < len(self.unigrams):  # words seen since: no column looked up yet
            grown = np.full(2 * len(self.unigrams), -2, dtype=np.int64)
            grown[: len(self.ucol)] = self.ucol
            self.ucol = grown
        word = keys < _PHRASE
        cols = np.empty(len(keys), dtype=np.int64)
        cols[word] = self.ucol[keys[word]]  # single words by array lookup, phrases by hash
        cols[~word] = self.col.get(keys[~word])  # MISSING (-2) for a phrase not seen yet
        new = np.flatnonzero(cols == -2)
        if len(new):
            fresh, first = np.unique(keys[new], return_index=True)
            fresh = fresh[np.argsort(first)]  # in order of first appearance
            cols[new] = self._assign(fresh)[np.searchsorted(np.sort(fresh), keys[new])]
        return cols

    def _assign(self, fresh: np.ndarray) -> np.ndarray:
        """Columns for term keys seen for the first time (sorted like ``np.sort(fresh)``)."""
        out = {}
        for k in fresh.tolist():
            term = self.term(k)
            c = self.vocab.get(term, -1)
            if c < 0 and self.grow:
                c = self.vocab[term] = len(self.vocab)
            out[k] = c
        keys = np.array(sorted(out), dtype=np.int64)
        cols = np.array([out[k] for k in keys.tolist()], dtype=np.int64)
        words = keys < _PHRASE
        self.ucol[keys[words]] = cols[words]
        self.col.put(keys[~words], cols[~words])
        return cols

    def term(self, key: int) -> str:
        """The string of a term key: a unigram id, or a pair of them for a phrase."""
        if key < _PHRASE:
            return self.unigrams[key]
        a, b = divmod(key, _PHRASE)
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


def events(lower: str, coder: Coder) -> tuple[np.ndarray, np.ndarray]:
    """(term key, paper) of every term ``phrase_terms`` yields for the batch, in its order."""
    codes = coder.codes(scan(lower))
    codes = codes[codes != SKIP]  # stop words vanish; phrases form across them
    is_term = codes >= 0
    ends = codes == DOC
    paper = np.repeat(np.cumsum(ends) - ends, 2)
    # Two slots per token, as phrase_terms emits them: the word, then the phrase it closes.
    keys = np.full(2 * len(codes), -1, dtype=np.int64)
    keys[0::2][is_term] = codes[is_term]
    pair = np.flatnonzero(is_term[1:] & is_term[:-1]) + 1
    keys[2 * pair + 1] = (codes[pair - 1] + 1) * _PHRASE + codes[pair]
    found = compounds(lower)
    if found:  # 'out-of-distribution' kept whole, after the paper's other terms (its end slot)
        starts = np.array([m.start() for m in re.finditer(SEP, lower)])
        where = np.searchsorted(starts, [s for s, _ in found])
        at = 2 * np.flatnonzero(ends)[where]
        extra = [coder.unigram(term_of(c.replace("-", ""))) for _, c in found]
        keys, paper = np.insert(keys, at, extra), np.insert(paper, at, paper[at])
    ok = keys >= 0
    return keys[ok], paper[ok]
