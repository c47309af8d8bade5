"""Headlines for papers whose source has no title, derived from the abstract. Pure text, no I/O.

The rule (docs/headlines.md lists what it gives for the bundled papers), first match wins:
1. a method the abstract names: ``ACR: long form`` from an acronym definition, or
   ``Name: what it is`` from "we propose Name, a …" / "a … dubbed Name";
2. the thing the paper proposes: "we propose / introduce / present a …" -> "A …";
3. the claim it shows: "we show / find / prove / demonstrate that …" -> the claim;
4. what it studies: "we study how …", "we identify / formalize / investigate …" -> the object;
5. otherwise the first sentence, cut at its first clause.
Asides (parentheses, dashes) are dropped, and a phrase longer than ``MAX_TITLE_CHARS`` loses
trailing clauses and prepositional phrases; "…" only when nothing else fits, never mid-word.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from digest.text.acronyms import acronym_span
from digest.text.latex import clean_text
from digest.text.sentences import sentences

MAX_TITLE_CHARS = 100

_ACRONYM = r"([A-Z][A-Za-z0-9\-]*[A-Z][A-Za-z0-9\-]*)"
_INTRO = re.compile(r"\b(propose|introduce|present|develop|design|call|dub|term|name)", re.I)
_LONG_THEN_SHORT = re.compile(r"((?:[\w\-]+\s+){1,12}?[\w\-]+)\s*\(" + _ACRONYM + r"\)")
_SHORT_THEN_LONG = re.compile(_ACRONYM + r"\s*(?:\(|,\s*(?:an?|the)\s+)((?:[\w\-]+\s*){2,12})")
_INNER_CAP = re.compile(r"\b([a-z]+)([A-Z])([a-z]+)\b")
_WE = (
    r"(?i:(?:\bwe|\b(?:this|our) (?:paper|work|study))\s+(?:first\s+|also\s+|then\s+|further\s+)?)"
)
_WE_AND = (
    r"(?i:(?:\bwe|\b(?:this|our) (?:paper|work|study)|,? and)\s+(?:first\s+|also\s+|then\s+)?)"
)
_MAKES = r"(?i:(?:propose|introduce|present|develop|design|build|construct)[sd]?)"
_NAME = r"(?P<name>[A-Z][\w\-]*[A-Z][\w\-]*|[A-Z][\w\-]+(?:\s+[A-Z][\w\-]+){1,3})"
_NAMED = re.compile(
    _WE_AND
    + _MAKES
    + r"\s+(?:(?:a|an|the)\s+)?(?:[\w\-]+\s+){0,4}?"
    + _NAME
    + r"\s*(?:\([^)]*\))?\s*,\s+(?P<desc>(?:a|an|the)\s+[^.;:]+)"
)
_DUBBED = re.compile(
    r"\b(?P<desc>(?:a|an|the)\s+[\w\-]+(?:\s+[\w\-]+){0,8}?),?\s+(?:dubbed|called|named|termed)\s+"
    r"(?P<name>[A-Z][\w\-]+)"
)
_PLACEHOLDER = re.compile(_WE_AND + _MAKES + r"\s+[a-z]\w*,\s+(?P<desc>(?:a|an)\s+[^.;:]+)")
_MADE = re.compile(_WE_AND + _MAKES + r"\s+(?P<obj>(?:a|an)\s+[^.;:]+)", re.I)
_CLAIM = re.compile(
    _WE
    + r"(?:show|find|prove|demonstrate|discover|observe|reveal|establish)s?\s+that\s+(?P<obj>.+)",
    re.I,
)
_STUDY = re.compile(
    _WE
    + r"(?:study|studies|investigate|ask|analy[sz]e|examine|explore)\s+(?P<obj>(?:how|whether|why|what|when)\s.+)",
    re.I,
)
_OBJECT = re.compile(
    _WE + r"(?:identify|formalize|characteri[sz]e|uncover|conduct|release|study|analy[sz]e)\s+"
    r"(?P<obj>(?:a|an|the|two|three|four|several|\d+)\s.+)",
    re.I,
)
_ANAPHOR = re.compile(
    r"^(this|these|that|those|it|they|such|them|for|in|under|when|if|by|with|on|at)\b", re.I
)
_ASIDE = re.compile(
    r"\s*(\((?:[^()]|\([^()]*\))*\)|\[[^\]]*\]|[—–]\s*[^—–]{1,80}?\s*[—–]|--[^-]{1,80}?--)"
)
_CLAUSE = re.compile(
    r"[:;?]|\s[—–-]{1,3}\s|[—–]|,\s+(?:which|where|while|but|yet|and we|as|whereby|thereby|"
    r"a phenomenon|i\.e\.|e\.g\.|and that)\b|\s(?:whose|because|where|which)\s"
    r"|\s+and\s+(?:we\s+)?(?:introduce|propose|show|find|detect|present|derive|prove)\b"
)
_TRAILING = {
    "by",
    "via",
    "with",
    "using",
    "for",
    "in",
    "on",
    "across",
    "under",
    "from",
    "through",
    "at",
    "of",
    "to",
    "that",
    "which",
    "where",
    "and",
    "while",
    "but",
}
_FILLER = re.compile(
    r"\b(?:certain|specific|various|novel|new|simple|very|highly)\s+(?:and\s+)?", re.I
)


def _fix_case(title: str) -> str:
    """Undo in-word emphasis like ``sTeering`` left over from bold initials."""
    return _INNER_CAP.sub(lambda m: m.group(0).lower(), title)


def _acronym_title(sents: list[str]) -> str | None:
    """``ACR: Long Form`` for a method the abstract introduces with an acronym definition."""
    for sentence in sents:
        if not _INTRO.search(sentence):
            continue
        for m in _LONG_THEN_SHORT.finditer(sentence):
            words, acr = m.group(1).split(), m.group(2)
            n = acronym_span(acr, words)
            if n and not acr.endswith("s"):
                return f"{acr}: {_title_case(_fix_case(' '.join(words[-n:])).split())}"
        for m in _SHORT_THEN_LONG.finditer(sentence):
            acr, words = m.group(1), m.group(2).split()
            last = acr[-1]
            for k in range(2, len(words) + 1):  # shortest long form ending on the last letter
                ends = words[k - 1][0].lower() == last.lower() or last.upper() in words[k - 1]
                if ends and acronym_span(acr, words[:k]) == k and not acr.endswith("s"):
                    return f"{acr}: {_title_case(_fix_case(' '.join(words[:k])).split())}"
    return None


def _title_case(words: list[str]) -> str:
    """'input-convex neural network' -> 'Input-Convex Neural Network' (an acronym's long form)."""
    small = {"a", "an", "the", "of", "for", "and", "or", "in", "on", "via", "with", "to", "by"}
    out = [
        w if i and w in small else "-".join(p[:1].upper() + p[1:] for p in w.split("-"))
        for i, w in enumerate(words)
    ]
    return " ".join(out)


def _named(sents: list[str]) -> str | None:
    """``Name: what it is`` for a method the abstract introduces by name."""
    for sentence in sents:
        m = _NAMED.search(sentence) or _DUBBED.search(sentence)
        if m:
            return (
                f"{m.group('name')}: {_capital(_phrase(m.group('desc'), len(m.group('name')) + 2))}"
            )
    return None


def _first_match(sents: list[str], pattern: re.Pattern[str]) -> str | None:
    """The object of the first sentence matching ``pattern`` that does not start with 'this'."""
    for sentence in sents:
        m = pattern.search(" ".join(_ASIDE.sub(" ", sentence).split()))
        if m and not _ANAPHOR.match(m.group("obj" if "obj" in m.groupdict() else "desc")):
            return _capital(_phrase(m.group("obj" if "obj" in m.groupdict() else "desc")))
    return None


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _phrase(text: str, reserved: int = 0) -> str:
    """A title-length phrase: asides dropped, cut at a clause, then at trailing phrases."""
    text = " ".join(_ASIDE.sub(" ", text).split()).rstrip(".")
    head = _CLAUSE.split(text, maxsplit=1)[0].strip(" ,")
    if len(head.split()) >= 3:
        text = head
    limit = MAX_TITLE_CHARS - reserved
    if len(text) > limit:
        text = _FILLER.sub("", text)
    words = text.split()
    relative = next((i for i, w in enumerate(words) if w in ("that", "which", "who")), 0)
    if len(" ".join(words)) > limit and relative >= 4:
        words = words[:relative]  # "a framework that does X with Y" -> "a framework"
    while len(" ".join(words)) > limit:  # drop the last prepositional phrase or clause
        cut = max((i for i, w in enumerate(words) if w.lower() in _TRAILING), default=0)
        if cut < 5:
            break
        words = words[:cut]
    while len(words) > 3 and words[-1].lower().strip(",") in _TRAILING:
        words.pop()
    words[-1] = words[-1].rstrip(",;")
    return shorten(" ".join(words), limit)


def shorten(text: str, limit: int = MAX_TITLE_CHARS) -> str:
    """Cut ``text`` to at most ``limit`` characters on a word boundary, never mid-word."""
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0]
    cut = re.sub(r"\s+(of|the|a|an|and|or|to|in|on|for|with|by|via|from|as)$", "", cut, flags=re.I)
    return cut.rstrip(",;: ") + "…"


def _first_sentence(sents: list[str]) -> str:
    """The fallback: the first sentence without its lead-in, cut at the first clause."""
    first = re.sub(r"^(in this (paper|work|study)|here)[, ]+", "", sents[0], flags=re.I)
    return _capital(_phrase(first))


def _rules() -> tuple[Callable[[list[str]], str | None], ...]:
    """The headline rules after the acronym one, in the order they are tried."""
    return (
        _named,
        lambda s: _first_match(s, _PLACEHOLDER),
        lambda s: _first_match(s, _MADE),
        lambda s: _first_match(s, _CLAIM),
        lambda s: _first_match(s, _STUDY),
        lambda s: _first_match(s, _OBJECT),
    )


def _source(rule: Callable[[list[str]], str | None], sents: list[str]) -> int | None:
    """The index of the sentence ``rule`` took its phrase from (each rule takes the first match)."""
    return next((i for i, s in enumerate(sents) if rule([s])), None)


def _derive(sents: list[str]) -> tuple[str, int | None]:
    """The headline of ``sents`` and the index of the sentence it was taken from."""
    found = _acronym_title(sents)
    if found and len(found) <= MAX_TITLE_CHARS:
        return found, _source(_acronym_title, sents)
    for rule in _rules():
        found = rule(sents)
        if found and len(found) >= 12:
            return found, _source(rule, sents)
    return _first_sentence(sents) or "Untitled paper", 0


def derive_title(abstract: str) -> str:
    """A short headline naming the contribution of a paper whose source has no title."""
    sents = sentences(clean_text(abstract))
    if not sents:
        return "Untitled paper"
    return _derive(sents)[0]


def headline_sentence(sents: list[str]) -> int | None:
    """The index of the sentence a derived headline of ``sents`` comes from (None: no sentence)."""
    return _derive(sents)[1] if sents else None


def ranked_sentences(sents: list[str]) -> list[int]:
    """Indices of the sentences that say what the paper did, in the headline rules' order (a
    named method, what it proposes, what it shows, what it studies); others are left out."""
    order: list[int] = []
    for rule in (_acronym_title, *_rules()):
        order += [i for i, s in enumerate(sents) if i not in order and rule([s])]
    return order


def contribution_sentences(abstract: str, limit: int = 2) -> list[str]:
    """The sentences that say what the paper does (for the snippet under a derived headline)."""
    picks = [
        s
        for s in sentences(abstract)
        if re.search(_WE + r"(?:" + _MAKES + r"|show|find|prove|demonstrate|identify)", s, re.I)
    ]
    return picks[:limit]
