"""Text analysis shared by indexing and querying: tokens, stems, phrases and corpus acronyms."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable

import Stemmer
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from digest.text import acronym_span

# Words that carry no topic in an abstract, on top of sklearn's English list.
_EXTRA_STOP = {
    "paper", "propose", "proposed", "method", "methods", "approach", "show", "results",
    "based", "using", "use", "used", "novel", "new", "work", "study", "present",
    "demonstrate", "existing", "however", "achieve", "achieves", "significantly",
    "experiments", "performance", "state", "art", "task", "tasks", "effective",
    "framework", "recent", "different", "various", "including", "provide", "problem",
}  # fmt: skip
STOP_WORDS = frozenset(ENGLISH_STOP_WORDS) | _EXTRA_STOP

_TOKEN = re.compile(r"[^\W_]*[^\W\d_][^\W_]*")  # words with a letter, any script
_STEMMER = Stemmer.Stemmer("english")
_STEMS: dict[str, str] = {}


def stem(word: str) -> str:
    """Porter2 stem of a lower-case word, cached (the same few thousand words recur)."""
    s = _STEMS.get(word)
    if s is None:
        s = _STEMS[word] = _STEMMER.stemWord(word)
    return s


def _word(raw: str) -> str:
    """Lower-case word; plural acronyms lose their s (CNNs -> cnn), which stemming would miss."""
    if len(raw) > 2 and raw[-1] == "s" and raw[:-1].isupper():
        raw = raw[:-1]
    return raw.lower()


def tokens(text: str) -> list[str]:
    """Stemmed content words of ``text``, stop words removed, in order."""
    words = (_word(t) for t in _TOKEN.findall(text))
    return [stem(w) for w in words if w not in STOP_WORDS and len(w) > 1]


_COMPOUND = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")


def phrase_terms(text: str) -> list[str]:
    """Unigram stems, adjacent-pair phrases (``diffus model``) and hyphenated compounds."""
    out: list[str] = []
    for clause in re.split(r"[.,;:()\[\]!?\"]", text):
        toks = tokens(clause)
        out.extend(toks)
        out.extend(f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False))
    # 'out-of-distribution' would lose 'out' and 'of' as stop words: keep the compound whole.
    compounds = _COMPOUND.findall(text.lower())
    out.extend(stem(c.replace("-", "")) for c in compounds if c.count("-") > 1)
    return out


_ACR = re.compile(r"\(([A-Z][A-Za-z0-9\-]*[A-Z][A-Za-z]?)\)")


class AcronymTable:
    """Acronym <-> long-form pairs learned from the corpus itself ('large language models (LLMs)')."""

    def __init__(self, pairs: dict[str, str] | None = None) -> None:
        self.short_to_long: dict[str, str] = pairs or {}
        self.long_to_short: dict[str, str] = {v: k for k, v in self.short_to_long.items()}

    @classmethod
    def mine(cls, texts: Iterable[str], min_count: int = 2) -> AcronymTable:
        """Find ``long form (ACR)`` definitions; keep each acronym's most frequent long form."""
        seen: dict[str, Counter[str]] = defaultdict(Counter)
        for text in texts:
            for m in _ACR.finditer(text):
                acr = m.group(1)
                key = acr[:-1] if acr.endswith("s") and acr[:-1].isupper() else acr
                # Look back a bounded number of words: a regex doing this backtracks badly.
                words = re.split(r"[.;:(]", text[max(0, m.start() - 150) : m.start()])[-1].split()[
                    -9:
                ]
                n = acronym_span(key, words)
                if n and len(key) >= 2:
                    seen[stem(key.lower())][" ".join(tokens(" ".join(words[-n:])))] += 1
        pairs = {}
        for short, longs in seen.items():
            long_form, count = longs.most_common(1)[0]
            if count >= min_count and " " in long_form and short not in STOP_WORDS:
                pairs[short] = long_form
        return cls(pairs)

    def expand(self, query_tokens: list[str]) -> list[str]:
        """Extra query terms: long forms of acronyms and acronyms of long forms in the query."""
        extra: list[str] = []
        for tok in query_tokens:
            if tok in self.short_to_long:
                # Phrases, not loose words: 'model' alone would match half the corpus.
                long_toks = self.short_to_long[tok].split()
                extra.extend(f"{a} {b}" for a, b in zip(long_toks, long_toks[1:], strict=False))
        joined = f" {' '.join(query_tokens)} "
        found = [lf for lf in self.long_to_short if f" {lf} " in joined]
        for (
            lf
        ) in found:  # only the longest: 'neural network' inside 'graph neural network' is not NN
            if not any(lf != other and lf in other for other in found):
                extra.append(self.long_to_short[lf])
        return extra
