"""A person's own papers as read from a reference manager's export or a list of ids. No I/O.

`/papers import` and `digestbot import-library` hand the file's bytes here; each entry comes back
with what identifies it (arXiv id, DOI, OpenReview id, a digestbot id from our own export) and,
when it has a title, a paper record built by the ingest rules (clean text, cut fields). BibTeX is
read by bibtexparser (string macros, nested braces, comments, broken entries); RIS (a line
format) and Zotero's CSV by small readers that keep line numbers (digest/library/formats.py).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from typing import Any

from digest.errors import DigestError
from digest.ingest.parse import make_record
from digest.models import LIBRARY_SOURCE, Links, PaperRecord
from digest.store.identity import MIN_HASH_CHARS
from digest.text.arxiv_ids import arxiv_base_id, arxiv_ref
from digest.text.hashes import derived_id, normalize_title
from digest.text.paper_refs import Ref, parse_ref

#: A library file above this is refused before it is read (a large Zotero export is ~300 KB).
MAX_IMPORT_BYTES = 1_000_000
#: Entries read from one file; the rest are counted as skipped.
MAX_ENTRIES = 1000

# Its per-entry warnings are reported as skipped entries with line numbers instead.
logging.getLogger("bibtexparser").setLevel(logging.ERROR)

__all__ = [
    "LIBRARY_SOURCE",
    "Entry",
    "Library",
    "LibraryError",
    "Ref",
    "parse_ref",
]

FORMATS = "a BibTeX (.bib), RIS (.ris) or Zotero CSV export, or arXiv ids, DOIs and links"


class LibraryError(DigestError):
    """A library file that cannot be read at all (too big, binary, empty, no entries)."""


@dataclass(frozen=True)
class Entry:
    """One entry of a library: where it starts, what identifies it, and its record when titled."""

    line: int
    ref: Ref = field(default_factory=Ref)
    record: PaperRecord | None = None

    @property
    def title(self) -> str:
        """The entry's title ('' for a bare id)."""
        return self.record.title if self.record else ""


@dataclass(frozen=True)
class Skipped:
    """An entry left out, with why (``line`` 0: not one place in the file)."""

    line: int
    reason: str


@dataclass(frozen=True)
class Library:
    """What a file held: its format, the entries to import, and those skipped while reading."""

    format: str
    entries: tuple[Entry, ...]
    skipped: tuple[Skipped, ...] = ()

    @property
    def read(self) -> int:
        """Entries read, skipped ones included."""
        return len(self.entries) + len(self.skipped)

    @property
    def unit(self) -> str:
        """What an entry's number counts: the line it starts on, or its place in an id list."""
        return "item" if self.format == "id list" else "line"


def _ref_of(fields: dict[str, str]) -> Ref:
    """The identifiers among an entry's fields (lower-case names), wherever the exporter put them."""
    arxiv = doi = openreview = paper_id = None
    eprint = fields.get("eprint", "") or fields.get("arxivid", "") or fields.get("arxiv", "")
    if ref := arxiv_ref(eprint.strip()):
        arxiv = ref[0]
    if d := fields.get("doi", "").strip():
        found = parse_ref(d) or parse_ref(f"doi:{d}")
        arxiv = arxiv or (found.arxiv if found else None)
        doi = found.doi if found else None
    for name in ("url", "urls", "pdf", "link", "journal", "extra", "note", "howpublished"):
        value = fields.get(name, "")
        for token in re.split(r"[\s;]+", value):
            found = parse_ref(token)
            if found:
                arxiv, doi = arxiv or found.arxiv, doi or found.doi
                openreview = openreview or found.openreview
        if not arxiv and name in ("journal", "extra", "note") and "arxiv" in value.lower():
            arxiv = arxiv_base_id(value)  # 'arXiv preprint arXiv:2301.00001', 'arXiv: 2301.00001'
        if m := re.search(r"digestbot id (\S+?)(?:\s|$|\))", value):
            paper_id = m.group(1)  # our own export: the stored paper's id
    return Ref(arxiv, doi, openreview, paper_id)


def _record(fields: dict[str, str], ref: Ref) -> PaperRecord | None:
    """The entry as a paper record (ingest's cleaning and limits), or None without a title."""
    title = fields.get("title", "")
    if not normalize_title(title):
        return None
    links = Links(
        abs=(f"https://arxiv.org/abs/{ref.arxiv}" if ref.arxiv else None)
        or (f"https://doi.org/{ref.doi}" if ref.doi else None)
        or _http(fields.get("url", "")),
        forum=f"https://openreview.net/forum?id={ref.openreview}" if ref.openreview else None,
    )
    rec = make_record(
        source=LIBRARY_SOURCE,
        abstract=fields.get("abstract", ""),
        title=title,
        id=ref.arxiv or "",  # else one derived from the text ('library-3f2a…')
        authors=fields.get("authors") or None,
        venue=fields.get("venue") or None,
        year=fields.get("year") or None,
        links=links,
    )
    if rec.title_derived or not normalize_title(rec.title):  # '{{{…}}}': nothing left of it
        return None
    if not ref.arxiv and len(rec.abstract) < MIN_HASH_CHARS:
        # A short abstract ('No abstract available.') names no one paper: the title must count,
        # or every such entry gets one id. Long ones keep their abstract-only id (stored ids).
        rec = replace(rec, id=derived_id(LIBRARY_SOURCE, f"{rec.title}\n{rec.abstract}"))
    return rec


def _http(text: str) -> str | None:
    first = text.split()[0] if text.split() else ""
    return first if first.startswith(("http://", "https://")) and len(first) < 1000 else None


def make_entry(line: int, fields: dict[str, Any]) -> Entry:
    """An entry from its fields (lower-case names; ``authors`` as one BibTeX-style string)."""
    ref = _ref_of(fields)
    authors = fields.get("authors", "")
    if authors:  # 'Lovelace, Ada and Alan Turing': BibTeX's separator is ' and '
        fields = fields | {"authors": [a.strip() for a in authors.split(" and ") if a.strip()]}
    try:
        record = _record(fields, ref)
    except ValueError:
        record = None
    return Entry(line, ref, record)


def capped(fmt: str, entries: list[Entry], skipped: list[Skipped]) -> Library:
    """The first ``MAX_ENTRIES`` entries; the rest are skipped for the limit."""
    over = entries[MAX_ENTRIES:]
    cut = [Skipped(e.line, f"over the limit of {MAX_ENTRIES:,} entries per file") for e in over]
    return Library(
        fmt, tuple(entries[:MAX_ENTRIES]), tuple(sorted(skipped, key=lambda s: s.line)) + tuple(cut)
    )
