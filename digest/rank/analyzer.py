"""Text analysis shared by indexing and querying: tokens, stems, phrases and corpus acronyms."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import Stemmer

from digest.text.acronyms import acronym_span

# Words that carry no topic in an abstract, on top of sklearn's English list.
_EXTRA_STOP = {
    "paper",
    "propose",
    "proposed",
    "method",
    "methods",
    "approach",
    "show",
    "results",
    "based",
    "using",
    "use",
    "used",
    "novel",
    "new",
    "work",
    "study",
    "present",
    "demonstrate",
    "existing",
    "however",
    "achieve",
    "achieves",
    "significantly",
    "experiments",
    "performance",
    "state",
    "art",
    "task",
    "tasks",
    "effective",
    "framework",
    "recent",
    "different",
    "various",
    "including",
    "provide",
    "problem",
}
# scikit-learn's ENGLISH_STOP_WORDS, kept as a file beside this one: importing scikit-learn
# costs a second of CPU that commands ranking nothing must not pay (tests/cli/test_lazy_cli.py
# checks the copy still equals scikit-learn's).
_ENGLISH = Path(__file__).with_name("english_stop_words.txt").read_text("utf-8").split()
STOP_WORDS = frozenset(_ENGLISH) | _EXTRA_STOP

_TOKEN = re.compile(r"[^\W_]+")  # letters and digits, any script; pure numbers dropped later
# Words and the clause punctuation that phrases must not cross, in one pass.
_TOKEN_OR_BREAK = re.compile(r"[^\W_]+|[.,;:()\[\]!?\"]")
# CNNs -> CNN, which stemming would miss. '\b[A-Z]' written as '[A-Z](?<!\w[A-Z])': a pattern
# that starts with a character class lets the regex engine skip ahead (2.4x faster, same matches).
_PLURAL_ACRONYM = re.compile(r"([A-Z])(?<!\w[A-Z])([A-Z0-9]+)s\b")
COMPOUND = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+){2,}")
_STEMMER = Stemmer.Stemmer("english")
_TERM: dict[str, str] = {}  # lower-case word -> stem, or "" for stop words and single letters


@dataclass
class AnalyzerOptions:
    """How words become terms; the defaults are the product's, the others exist for ablations."""

    light_stem: bool = True  # plurals only: Porter2 merges words users keep apart (robot/robotics)
    conj_breaks_phrase: bool = True  # no phrase across 'and'/'or' ('datasets and benchmarks')


OPTIONS = AnalyzerOptions()


def configure(**changes: bool) -> None:
    """Change the analyzer (benchmark ablations only; an index must be rebuilt afterwards)."""
    for k, v in changes.items():
        setattr(OPTIONS, k, v)
    _TERM.clear()


# Words that join two topics rather than one phrase; other stop words ('of', 'on') sit inside one.
CONJUNCTIONS = frozenset({"and", "or", "nor", "but", "versus", "vs", "whereas", "while", "than"})

# Plural forms that the suffix rules below would get wrong.
_KEEP = {
    "bias": "bias",
    "biases": "bias",
    "gas": "gas",
    "lens": "lens",
    "news": "news",
    "canvas": "canvas",
    "atlas": "atlas",
    "alias": "alias",
    "series": "series",
    "species": "species",
    "indices": "index",
    "matrices": "matrix",
    "vertices": "vertex",
    "analyses": "analysis",
    "hypotheses": "hypothesis",
    "data": "data",
    "does": "does",
}


def light_stem(word: str) -> str:
    """Singular of an English plural ('models' -> 'model'); other endings are kept as typed."""
    if word in _KEEP:
        return _KEEP[word]
    n = len(word)
    if n > 4 and word.endswith("ies") and word[-4] not in "aeo":
        return word[:-3] + "y"
    if n > 4 and word.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return word[:-2]
    if n > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s")):
        return word[:-1]
    return word


def family_key(term: str) -> str:
    """The Porter2 stem of an index word: words sharing it are one family ('causal', 'causality')."""
    return _STEMMER.stemWord(term)


def families(terms: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Single-word index terms grouped by family, only families with more than one member."""
    groups: dict[str, list[str]] = defaultdict(list)
    for t in terms:
        if " " not in t:
            groups[family_key(t)].append(t)
    return {k: tuple(v) for k, v in groups.items() if len(v) > 1}


def _stem_word(word: str) -> str:
    return light_stem(word) if OPTIONS.light_stem else _STEMMER.stemWord(word)


def _term(word: str) -> str:
    """Stem of a lower-case word, '' for words that carry no topic (cached: words recur)."""
    t = _TERM.get(word)
    if t is None:
        no_topic = word in STOP_WORDS or len(word) < 2 or word.isdigit()
        t = _TERM[word] = "" if no_topic else _stem_word(word)
    return t


def term_of(word: str) -> str:
    """The index term of one lower-case word, '' for a stop word."""
    return _term(word)


def terms_of(words: list[str]) -> list[str]:
    """``term_of`` of each lower-case word, looked up in one pass (a page of titles at once)."""
    got = list(map(_TERM.get, words))
    if None in got:  # a word never analysed before
        got = [t if t is not None else _term(w) for t, w in zip(got, words, strict=True)]
    return got


def stem(word: str) -> str:
    """The index term of a lower-case word (its singular), stop words included."""
    return _term(word) or _stem_word(word)


def fold(text: str) -> str:
    """Lower-cased text with plural acronyms made singular, as every analysis starts."""
    return _PLURAL_ACRONYM.sub(r"\1\2", text).lower()


def tokens(text: str) -> list[str]:
    """Stemmed content words of ``text``, stop words removed, in order."""
    words = _TOKEN.findall(fold(text))
    return [t for t in map(_term, words) if t]


def phrase_terms(text: str) -> list[str]:
    """Unigram stems, adjacent-pair phrases (``diffus model``) and hyphenated compounds."""
    lower = fold(text)
    out: list[str] = []
    prev = ""
    for tok in _TOKEN_OR_BREAK.findall(lower):
        if len(tok) == 1 and not tok.isalnum():
            prev = ""  # clause punctuation ends a phrase
            continue
        t = _term(tok)
        if not t:
            if OPTIONS.conj_breaks_phrase and tok in CONJUNCTIONS:
                prev = ""  # 'datasets and benchmarks' is two topics, not the phrase 'dataset benchmark'
            continue  # other stop words join a phrase: 'learning on graphs' -> 'learning graph'

        out.append(t)
        if prev:
            out.append(f"{prev} {t}")
        prev = t
    # 'out-of-distribution' would lose 'out' and 'of' as stop words: keep the compound whole.
    out.extend(_term(c.replace("-", "")) for c in COMPOUND.findall(lower))
    return out


_ACR = re.compile(r"\(([A-Z][A-Za-z0-9\-]*[A-Z][A-Za-z]?)\)")


def glued_terms(words: list[str]) -> list[str]:
    """The term(s) words hyphenated together are indexed as beyond their own ('out', 'of',
    'distribution' -> 'outofdistribution'); [] when the run makes none."""
    single = {t for w in words for t in phrase_terms(w)}
    return [t for t in phrase_terms("-".join(words)) if " " not in t and t not in single]


def _words_before(text: str, end: int) -> list[str]:
    """Up to 9 words before ``end`` in its clause (after the last '.;:(' of the 150 characters
    before it): looking back a bounded number of words, as a regex doing this backtracks badly."""
    window = text[max(0, end - 150) : end]
    return window[max(window.rfind(c) for c in ".;:(") + 1 :].split()[-9:]


class AcronymTable:
    """Acronym <-> long-form pairs learned from the corpus itself ('large language models (LLMs)')."""

    def __init__(self, pairs: dict[str, str] | None = None) -> None:
        self.short_to_long: dict[str, str] = pairs or {}
        self.long_to_short: dict[str, str] = {v: k for k, v in self.short_to_long.items()}
        self.by_first: dict[str, list[str]] = defaultdict(list)  # long forms by their first word
        for long_form in self.long_to_short:
            self.by_first[long_form.split()[0]].append(long_form)

    @classmethod
    def mine(cls, texts: Iterable[str], min_count: int = 2) -> AcronymTable:
        """Find ``long form (ACR)`` definitions; keep each acronym's most frequent long form."""
        seen: dict[str, Counter[str]] = defaultdict(Counter)
        long_forms: dict[str, str] = {}  # spelled-out words -> their terms (long forms recur)
        for text in texts:
            for m in _ACR.finditer(text):
                acr = m.group(1)
                key = acr[:-1] if acr.endswith("s") and acr[:-1].isupper() else acr
                words = _words_before(text, m.start())
                n = acronym_span(key, words)
                if n and len(key) >= 2:
                    span = " ".join(words[-n:])
                    if span not in long_forms:
                        long_forms[span] = " ".join(tokens(span))
                    seen[stem(key.lower())][long_forms[span]] += 1
        pairs = {}
        for short, longs in seen.items():
            long_form, count = longs.most_common(1)[0]
            if count >= min_count and " " in long_form and short not in STOP_WORDS:
                pairs[short] = long_form
        return cls(pairs)

    def expand(self, query_tokens: list[str]) -> list[tuple[str, str]]:
        """(extra term, query term it came from): long forms of acronyms and acronyms of long forms."""
        extra: list[tuple[str, str]] = []
        for tok in query_tokens:
            if tok in self.short_to_long:
                # Phrases, not loose words: 'model' alone would match half the corpus.
                long_toks = self.short_to_long[tok].split()
                extra.extend(
                    (f"{a} {b}", tok) for a, b in zip(long_toks, long_toks[1:], strict=False)
                )
        joined = f" {' '.join(query_tokens)} "
        found = [
            lf
            for tok in set(query_tokens)
            for lf in self.by_first.get(tok, ())
            if f" {lf} " in joined
        ]
        # Only the longest: 'neural network' inside 'graph neural network' is not NN.
        extra += [
            (self.long_to_short[lf], lf.split()[-1])
            for lf in found
            if not any(lf != o and lf in o for o in found)
        ]
        return extra
