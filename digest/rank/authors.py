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


class _Table:
    """Every stored author of one index by surname, with their rows: built once per index (a
    name looked up costs its surname's people, not a pass over every paper)."""

    def __init__(self, authors: Sequence[tuple[str, ...]]) -> None:
        self.authors = authors  # held: the cache below is keyed by its identity
        self.surnames: dict[str, dict[NameKey, list]] = {}
        self.rows: dict[NameKey, list[int]] = {}
        for row, names in enumerate(authors):
            for name in names:
                if (k := name_key(name)) is None:
                    continue
                entry = self.surnames.setdefault(k.surname, {}).setdefault(k, [name, row, 0])
                entry[2] += 1
                rows = self.rows.setdefault(k, [])
                if not rows or rows[-1] != row:
                    rows.append(row)


_TABLES: dict[int, _Table] = {}


def _table(authors: Sequence[tuple[str, ...]]) -> _Table:
    table = _TABLES.get(id(authors))
    if table is None or table.authors is not authors:
        if len(_TABLES) >= 4:  # an index or two live at once; older ones are gone
            _TABLES.pop(next(iter(_TABLES)))
        table = _TABLES[id(authors)] = _Table(authors)
    return table


def people(authors: Sequence[tuple[str, ...]], typed: str) -> list[Person]:
    """The stored authors ``typed`` means, most papers first: those equal to it once
    normalised when there are any (under either reading of "Zhang Yu"), else all it fits."""
    key = name_key(typed)
    if key is None:
        return []
    table = _table(authors)
    exact = [key] + ([k] if (k := _swapped(typed)) else [])
    found = {
        k: table.surnames[k.surname][k] for k in exact if k in table.surnames.get(k.surname, {})
    }
    if not found:
        found = {k: e for k, e in table.surnames.get(key.surname, {}).items() if fits(key, k)}
    out = [Person(k, n, r, c) for k, (n, r, c) in found.items()]
    return sorted(out, key=lambda p: (-p.papers, p.name))


def rows_of(authors: Sequence[tuple[str, ...]], keys: frozenset[NameKey]) -> set[int]:
    """The rows (papers) any of the people ``keys`` wrote."""
    table = _table(authors)
    return {r for k in keys for r in table.rows.get(k, ())}


def by(names: Sequence[str], keys: frozenset[NameKey]) -> bool:
    """True when any of a paper's ``names`` is one of the people ``keys``."""
    return any(name_key(n) in keys for n in names)
