"""TL;DR lines: one sentence saying what a paper did and found. Pure text, no I/O.

The default line is extractive and deterministic: the abstract's sentence that the headline
rules (digest/text/headline.py) rank first as stating the contribution, never one that only restates
the title, and never the sentence a derived headline was already taken from. An abstractive line
(digest/tldr/writer.py) is cached on the stored paper as ``Paper.tldr`` and wins when present.
docs/tldr.md explains both.
"""

from __future__ import annotations

import re
from functools import lru_cache

from digest.models import Paper
from digest.text.hashes import normalize_title
from digest.text.headline import headline_sentence, ranked_sentences, shorten
from digest.text.latex import clean_text
from digest.text.sentences import sentences

#: A TL;DR is at most this long; a longer sentence is cut on a word boundary with "…".
MAX_TLDR_CHARS = 300
#: A sentence shorter than this says too little to stand alone ("Code is available.").
MIN_TLDR_CHARS = 40

_LEAD_IN = re.compile(
    r"^(?:in this (?:paper|work|study|article)|here|to this end|to address (?:this|these)"
    r"(?: \w+){0,3}|specifically|concretely|therefore|thus|hence|finally|moreover|overall)\s*,\s*",
    re.I,
)
_CITATION = re.compile(r"\s*\[\d+(?:\s*[,–-]\s*\d+)*\]")
_RESULT = re.compile(
    r"\b(?:outperform|achiev|improv|reduc|surpass|exceed|reach(?:es|ed)?\b|dominat|"
    r"state[- ]of[- ]the[- ]art|we (?:find|observe|show|prove|demonstrate)\b|"
    r"(?:results|experiments|evaluations?|analys[ie]s) (?:show|demonstrate|indicate|confirm|reveal))"
    r"|\d(?:\.\d+)?\s?(?:%|pp\b|×|x\b|dB\b)",
    re.I,
)
_OWN_WORK = re.compile(
    r"\b(?:we|our (?:method|approach|model|framework|analysis|results?))\s+(?:\w+\s+){0,2}?"
    r"(?:show|find|prove|demonstrate|observe|reveal|establish|identify|derive|introduce|propose|"
    r"present|develop|design|formali[sz]e|build|release|conduct|restore|enable)",
    re.I,
)
# An opening that leans on what came before ("These gains…") or sets the scene ("Prior work…").
_BACKGROUND = re.compile(
    r"^(?:this|these|those|such|it|they|however|yet|while|although|despite|prior|previous|"
    r"existing|current|recent|most|many)\b",
    re.I,
)
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "and",
        "or",
        "in",
        "on",
        "to",
        "with",
        "by",
        "via",
        "from",
        "as",
        "at",
        "is",
        "are",
        "be",
        "we",
        "our",
        "this",
        "that",
        "these",
        "its",
        "it",
        "their",
        "which",
        "using",
        "based",
        "into",
        "over",
        "under",
        "between",
        "through",
    ]
)


def _words(text: str) -> set[str]:
    """Content words of ``text``, case and accents folded (a crude stem: a trailing 's' goes)."""
    return {w.rstrip("s") for w in normalize_title(text).split() if w not in _STOP and len(w) > 1}


def restates(sentence: str, title: str) -> bool:
    """True when ``sentence`` says little beyond ``title``: under four content words the title
    lacks, or the title itself (a line that repeats the headline tells the reader nothing)."""
    extra = _words(sentence) - _words(title)
    return len(extra) < 4 or normalize_title(sentence) == normalize_title(title)


def tidy(sentence: str) -> str:
    """A sentence as a TL;DR: lead-in ("In this paper, ") and numeric citations dropped,
    capitalised, single-spaced, at most ``MAX_TLDR_CHARS``."""
    text = " ".join(_CITATION.sub("", sentence).split())
    text = _LEAD_IN.sub("", text)
    text = text[:1].upper() + text[1:]
    return shorten(text, MAX_TLDR_CHARS)


def _tier(i: int, sentence: str, ranked: list[int]) -> int:
    """How well a sentence states what the paper did and found (0 best): one the headline rules
    rank, one reporting a result, one in the authors' voice, any other, background last."""
    if i in ranked:
        return 0
    if _BACKGROUND.match(sentence) or i == 0:
        return 4
    if _RESULT.search(sentence):
        return 1
    return 2 if _OWN_WORK.search(sentence) else 3


def _order(sents: list[str]) -> list[int]:
    """Every sentence index, best TL;DR first: by tier, then one that fits before one that must
    be cut, then the headline rules' order (tier 0) or the abstract's."""
    ranked = ranked_sentences(sents)

    def key(i: int) -> tuple[int, bool, int]:
        fits = MIN_TLDR_CHARS <= len(sents[i]) <= MAX_TLDR_CHARS
        return _tier(i, sents[i], ranked), not fits, ranked.index(i) if i in ranked else i

    return sorted(range(len(sents)), key=key)


@lru_cache(maxsize=4096)  # a paper is shown again and again (pages, previews, digests)
def extractive_tldr(abstract: str, title: str = "", title_derived: bool = False) -> str:
    """The abstract's sentence that best states the contribution, tidied ('' for no abstract).

    Skipped: a sentence restating ``title``; with ``title_derived``, the sentence the headline
    was derived from. Within a tier, sentences from ``MIN_TLDR_CHARS`` to ``MAX_TLDR_CHARS`` long
    come before longer ones (which are cut).
    """
    sents = sentences(clean_text(abstract))
    if not sents:
        return ""
    used = headline_sentence(sents) if title_derived else None
    best = next((i for i in _order(sents) if i != used and not restates(sents[i], title)), None)
    return "" if best is None else tidy(sents[best])


def tldr_line(paper: Paper) -> str:
    """The TL;DR shown for ``paper``: its cached abstractive line, else the extractive one."""
    if paper.tldr:
        return paper.tldr
    return extractive_tldr(paper.abstract, paper.title, paper.title_derived)
