"""BibTeX entries for papers (what reading groups paste into their reference managers). No I/O."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

from digest.models import Paper
from digest.text.arxiv_ids import paper_arxiv_ref

# One pass over the text, so a replacement is never escaped again. Braces become commands with
# balanced braces: BibTeX counts '\{' as a brace too, and one stray '}' in a title would end the
# field early and make the whole file unreadable.
_SPECIAL = str.maketrans(
    {c: f"\\{c}" for c in "&%$#_"}
    | {
        "{": r"\textbraceleft{}",
        "}": r"\textbraceright{}",
        "\\": r"\textbackslash{}",
        "~": r"\~{}",
        "^": r"\^{}",
    }
)


def _escape(text: str) -> str:
    """Text as a BibTeX field holds it literally: LaTeX specials escaped, braces balanced."""
    return text.translate(_SPECIAL)


def _url(url: str | None) -> str | None:
    """A URL with braces and backslashes percent-encoded (they would unbalance the field)."""
    if not url:
        return None
    return url.replace("{", "%7B").replace("}", "%7D").replace("\\", "%5C")


#: Title words that say nothing about a paper, skipped when a key takes its first word.
_FILLER = frozenset(
    {
        "a",
        "an",
        "the",
        "on",
        "of",
        "for",
        "in",
        "to",
        "and",
        "or",
        "with",
        "from",
        "towards",
        "toward",
        "when",
        "what",
        "which",
        "how",
        "why",
        "is",
        "are",
        "do",
        "does",
        "can",
        "via",
        "using",
        "into",
        "over",
        "under",
        "about",
        "through",
        "beyond",
        "between",
        "without",
        "within",
        "your",
        "our",
        "their",
        "this",
        "that",
        "these",
        "those",
        "more",
        "less",
        "than",
        "very",
        "not",
        "one",
        "two",
        "three",
        "new",
        "novel",
    }
)


def _ascii_words(text: str) -> list[str]:
    """Lower-case ASCII words of ``text`` (accents folded: 'Müller' -> 'muller')."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.findall(r"[a-z0-9]+", folded)


def _surname(author: str) -> str:
    """'Ada Lovelace' and 'Lovelace, Ada' both give 'lovelace'."""
    name = author.split(",")[0] if "," in author else (author.split() or [""])[-1]
    return "".join(_ascii_words(name))


def _title_words(title: str) -> list[str]:
    return [w for w in _ascii_words(title) if w not in _FILLER and not w.isdigit()]


MAX_KEY_WORD = 40  # letters kept of the surname and of the title word


def make_key(
    paper_id: str, title: str, authors: Sequence[str], year: int | None, tag_chars: int = 4
) -> str:
    """``lovelace2026sparse-3f2a``: first author's surname, year, first telling title word, and a
    short tag of the paper id (it keeps two papers with the same author, year and word apart).
    Without authors (the NeurIPS list) the headline gives the first part: ``trace2026temporal-…``."""
    words = _title_words(title) or ["paper"]
    first = _surname(authors[0]) if authors else ""
    if not first:
        first, words = words[0], words[1:] or ["paper"]
    tag = hashlib.sha1(paper_id.encode()).hexdigest()[:tag_chars]
    # Each word part is cut, so a key always fits its 200-character column (a 240-letter DNA
    # string as a title stopped a PostgreSQL ingest and the cite-key migration) and stays typeable.
    return f"{first[:MAX_KEY_WORD]}{year or ''}{words[0][:MAX_KEY_WORD]}-{tag}"


def cite_key(p: Paper, tag_chars: int = 4) -> str:
    """The paper's key: the one the store issued when it first stored the paper, kept for good.

    A key someone pasted into a .tex file must keep working: \\cite{trace2026temporal-ad3f}
    breaks the day the key changes. A key made from the title and authors would change when a
    paper stored with a generated headline (no title yet) later gets its real title, or its
    authors arrive; so, as Zotero's Better BibTeX does with pinned keys, the first key issued
    stays, even when its words no longer match the title. A paper the store never numbered
    (built elsewhere) gets one made from what it has now."""
    return p.cite_key or make_key(p.id, p.title, p.authors, p.year, tag_chars)


def arxiv_id(p: Paper) -> str | None:
    """The paper's arXiv id when it is from arXiv (source, id or arxiv.org link), else None: what
    the store worked out, else the same rule (``paper_arxiv_ref``) for a paper built elsewhere."""
    if p.arxiv_id:
        return p.arxiv_id
    ref = paper_arxiv_ref(p.id, p.source, p.links.abs, p.links.pdf)
    return ref[0] if ref else None


def _kind(p: Paper) -> tuple[str, dict[str, str | None]]:
    """Entry type and where it appeared: a venue, an arXiv preprint, or neither (@misc).

    Only a paper from arXiv is called an arXiv preprint: a JSONL paper without a venue is not.
    """
    if p.venue:
        return "inproceedings", {"booktitle": _escape(p.venue)}
    if eprint := arxiv_id(p):
        return "article", {
            "journal": f"arXiv preprint arXiv:{_escape(eprint)}",
            "eprint": _escape(eprint),
            "archivePrefix": "arXiv",
        }
    return "misc", {}


def entry(p: Paper, key: str | None = None) -> str:
    """One @inproceedings/@article/@misc entry (under ``key``, else the paper's cite key)."""
    kind, where = _kind(p)
    fields = {
        "title": "{" + _escape(p.title) + "}",
        "author": " and ".join(_escape(a) for a in p.authors) or None,
        "year": str(p.year) if p.year else None,
        **where,
        "url": _url(p.links.abs or p.links.forum or p.links.pdf),
        "note": f"digestbot id {_escape(p.id)}"
        + (" (title derived from the abstract)" if p.title_derived else ""),
    }
    body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields.items() if v)
    return f"@{kind}{{{key or cite_key(p)},\n{body}\n}}"


def export(papers: list[Paper]) -> str:
    """A .bib file's text: one entry per paper (a paper listed twice is written once)."""
    unique = list({p.id: p for p in papers}.values())
    keys = {p.id: cite_key(p) for p in unique}
    for chars in (8, 40):  # two 4-character tags alike (1 in 65,536): longer tags for those two
        counts = Counter(keys.values())
        clash = [p for p in unique if counts[keys[p.id]] > 1]
        movable = [p for p in clash if not p.cite_key] or clash  # an issued key moves last
        keys |= {p.id: make_key(p.id, p.title, p.authors, p.year, chars) for p in movable}
    return "\n\n".join(entry(p, keys[p.id]) for p in unique) + ("\n" if unique else "")
