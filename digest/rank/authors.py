"""Whole-name author matching, the one rule behind `author:` in searches and subscriptions.

A name is a surname and its given names, compared word by word after folding accents and case:
"Yu Zhang" is never "Chenyu Zhang", "Müller" is "Muller", "Zhang, Yu" is "Yu Zhang", and an
initial ("Y. Zhang") stands for any given name it starts. A typed name means the stored names
equal to it once normalised; when none is, every stored name it fits (so "Y. Zhang" may mean
"Yu Zhang" and "Yang Zhang": ambiguous, and the caller says so).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

# A word of a name: letters, joined across hyphens and apostrophes ("Jia-Yu" is one given name,
# "O'Brien" one surname); "J.-Y." gives two initials.
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})


@dataclass(frozen=True)
class NameKey:
    """A person's name as compared: the surname and the given names, in order."""

    surname: str
    given: tuple[str, ...] = ()


def _words(text: str) -> list[str]:
    folded = "".join(
        c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)
    ).casefold()
    words = [re.sub(r"['’-]", "", w) for w in _WORD.findall(folded)]
    return [w for w in words if w not in _SUFFIXES]


@lru_cache(maxsize=1 << 16)
def name_key(name: str) -> NameKey | None:
    """``name`` normalised ("Zhang, Yu" and "Yu Zhang" alike), or None when it has no letters."""
    before, comma, after = name.partition(",")
    if comma and _words(after) and _words(before):
        family, given = _words(before), _words(after)
        # "De Sa, Christopher" reads as "Christopher De Sa": particles follow the given names
        return NameKey(family[-1], tuple(given + family[:-1]))
    words = _words(name)
    if not words:
        return None
    return NameKey(words[-1], tuple(words[:-1]))


def _swapped(name: str) -> NameKey | None:
    """The other reading of a two-word name without a comma ("Zhang Yu" as surname first)."""
    words = _words(name)
    if "," in name or len(words) != 2:
        return None
    return NameKey(words[0], (words[1],))


def _word_fits(typed: str, stored: str) -> bool:
    if typed == stored:
        return True
    return (len(typed) == 1 and stored.startswith(typed)) or (
        len(stored) == 1 and typed.startswith(stored)
    )


def fits(typed: NameKey, stored: NameKey) -> bool:
    """True when ``stored`` may be the person ``typed`` names: the same surname, and each typed
    given name (or initial) matching a stored one, in order (a typed surname alone fits all)."""
    if typed.surname != stored.surname:
        return False
    rest = iter(stored.given)
    return all(any(_word_fits(t, s) for s in rest) for t in typed.given)


@dataclass(frozen=True)
class Person:
    """One stored author a typed name may mean: a name as stored, and how many papers have it."""

    key: NameKey
    name: str  # one spelling as the index keeps it
    row: int  # a paper of theirs (its stored spelling gives the name back in its own case)
    papers: int


def people(authors: Sequence[tuple[str, ...]], typed: str) -> list[Person]:
    """The stored authors ``typed`` means, most papers first: those equal to it once
    normalised when there are any (under either reading of "Zhang Yu"), else all it fits."""
    key = name_key(typed)
    if key is None:
        return []
    exact = {key} | ({k} if (k := _swapped(typed)) else set())
    found: dict[NameKey, list] = {}
    fitting: dict[NameKey, list] = {}
    for row, names in enumerate(authors):
        for name in names:
            k = name_key(name)
            if k is None:
                continue
            into = found if k in exact else fitting if fits(key, k) else None
            if into is not None:
                entry = into.setdefault(k, [name, row, 0])
                entry[2] += 1
    chosen = found or fitting
    out = [Person(k, n, r, c) for k, (n, r, c) in chosen.items()]
    return sorted(out, key=lambda p: (-p.papers, p.name))


def by(names: Sequence[str], keys: frozenset[NameKey]) -> bool:
    """True when any of a paper's ``names`` is one of the people ``keys``."""
    return any(name_key(n) in keys for n in names)
