"""A person's own papers as read from a reference manager's export or a list of ids. No I/O.

`/papers import` and `digestbot import-library` hand the file's bytes here; each entry comes back
with what identifies it (arXiv id, DOI, OpenReview id, a digestbot id from our own export) and,
when it has a title, a paper record built by the ingest rules (clean text, cut fields). BibTeX is
read by bibtexparser (string macros, nested braces, comments, broken entries); RIS (a line
format) and Zotero's CSV by the small readers below, which keep line numbers for the reasons.
"""

from __future__ import annotations

import csv
import io
import logging
import re
from dataclasses import dataclass, field, replace
from typing import Any

from digest.errors import DigestError
from digest.ingest.parse import decode, make_record
from digest.models import LIBRARY_SOURCE, Links, PaperRecord
from digest.text import arxiv_base_id, arxiv_ref, normalize_title

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
    "parse_library",
    "parse_ref",
]

FORMATS = "a BibTeX (.bib), RIS (.ris) or Zotero CSV export, or arXiv ids, DOIs and links"


class LibraryError(DigestError):
    """A library file that cannot be read at all (too big, binary, empty, no entries)."""


@dataclass(frozen=True)
class Ref:
    """What identifies one paper: any of an arXiv id, a DOI, an OpenReview id, a digestbot id."""

    arxiv: str | None = None
    doi: str | None = None
    openreview: str | None = None
    paper_id: str | None = None

    def __bool__(self) -> bool:
        return bool(self.arxiv or self.doi or self.openreview or self.paper_id)

    def keys(self) -> tuple[str, ...]:
        """Keys under which two entries are the same paper."""
        pairs = (("arxiv", self.arxiv), ("doi", self.doi), ("or", self.openreview),
                 ("id", self.paper_id))  # fmt: skip
        return tuple(f"{k}:{v}" for k, v in pairs if v)


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


# -- identifiers --------------------------------------------------------------------------------

_DOI = re.compile(r"(10\.\d{4,9}/[^\s\"<>{}]+)")
_DOI_URL = re.compile(r"(?i)(?:https?://)?(?:dx\.)?doi\.org/(10\.\d{4,9}/[^\s\"<>{}]+)")
_OPENREVIEW = re.compile(
    r"(?i)(?:https?://)?(?:www\.)?openreview\.net/(?:forum|pdf)/?\?(?:[^#\s]*&)?"
    r"id=([A-Za-z0-9_\-]{5,40})(?:[&#]\S*)?"
)
_ARXIV_DOI = re.compile(r"(?i)^10\.48550/arxiv\.(.+)$")  # arXiv's own DOIs name the arXiv id


def _doi(text: str) -> str | None:
    """A DOI, lower-cased (DOIs are case-insensitive), without trailing punctuation."""
    return text.rstrip(".,;)]").lower() or None


def parse_ref(text: str) -> Ref | None:
    """The paper a typed id or link names: an arXiv id or arxiv.org link, a DOI or doi.org
    link, an OpenReview forum/pdf link; None for anything else (a stored paper's own id, a word)."""
    text = _unwrap(text)
    if not text or len(text) > 300:
        return None
    if ref := arxiv_ref(text) or arxiv_ref(text, url=True):
        return Ref(arxiv=ref[0])
    if m := _OPENREVIEW.fullmatch(text):
        return Ref(openreview=m.group(1))
    m = _DOI_URL.fullmatch(text) or re.fullmatch(r"(?i)(?:doi:\s*)?" + _DOI.pattern, text)
    if m:
        doi = _doi(m.group(1))
        arxiv = _ARXIV_DOI.match(doi or "")
        if arxiv and (ref := arxiv_ref(arxiv.group(1))):
            return Ref(arxiv=ref[0])
        return Ref(doi=doi)
    return None


def _unwrap(text: str) -> str:
    """A token without Slack's link markup (``<https://…|label>``) and surrounding punctuation."""
    text = text.strip().strip(",;")
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1].split("|", 1)[0]
    return text.strip()


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
    return make_record(
        source=LIBRARY_SOURCE,
        abstract=fields.get("abstract", ""),
        title=title,
        id=ref.arxiv or "",  # else one derived from the text ('library-3f2a…')
        authors=fields.get("authors") or None,
        venue=fields.get("venue") or None,
        year=fields.get("year") or None,
        links=links,
    )


def _http(text: str) -> str | None:
    first = text.split()[0] if text.split() else ""
    return first if first.startswith(("http://", "https://")) and len(first) < 1000 else None


# -- formats ------------------------------------------------------------------------------------


def parse_library(data: bytes, name: str = "the file") -> Library:
    """Entries of a BibTeX, RIS or CSV export or an id list (told by its name, else its text)."""
    if len(data) > MAX_IMPORT_BYTES:
        raise LibraryError(
            f"{name} is {len(data) / 1e6:.1f} MB; the limit is {MAX_IMPORT_BYTES / 1e6:.0f} MB."
        )
    try:
        text, _ = decode(data, name)
    except DigestError as exc:
        raise LibraryError(f"{exc} Send {FORMATS}.") from None
    kind = _format(text, name)
    library = _READERS[kind](text)
    if not library.read or (kind == "id list" and not library.entries):  # not one id: wrong file
        raise LibraryError(f"No entries found in {name}. Send {FORMATS}.")
    return _deduplicated(library)


def _format(text: str, name: str) -> str:
    suffix = name.lower().rsplit(".", 1)[-1] if "." in name else ""
    if suffix in ("bib", "bibtex") or re.search(r"(?m)^\s*@\w+\s*[{(]", text):
        return "BibTeX"
    if suffix == "ris" or re.search(r"(?m)^TY  - ", text):
        return "RIS"
    first = text.lstrip().split("\n", 1)[0].lower()
    if suffix == "csv" or ("title" in first and first.count(",") >= 2):
        return "CSV"
    return "id list"


def _bibtex(text: str) -> Library:
    import bibtexparser  # loads with an import, not with every command

    lib = bibtexparser.parse_string(text)
    entries, skipped = [], []
    for block in lib.failed_blocks:
        line = block.start_line + 1
        if type(block).__name__ == "DuplicateBlockKeyBlock":
            skipped.append(Skipped(line, f"duplicate: the key {block.key!r} again"))
        else:
            skipped.append(Skipped(line, "unreadable BibTeX (unbalanced braces or quotes?)"))
    for e in lib.entries:
        f = {k.lower(): _bib_value(v.value) for k, v in e.fields_dict.items()}
        if e.entry_type.lower() in ("comment", "preamble"):
            continue
        f["authors"] = " and ".join(f.get("author", "").split(" and "))
        f["venue"] = f.get("booktitle") or f.get("journal", "")
        if "arxiv" in f["venue"].lower():
            f["venue"] = ""  # 'arXiv preprint arXiv:…' is where it is posted, not a venue
        entries.append(_entry(e.start_line + 1, f))
    entries.sort(key=lambda x: x.line)
    return _library("BibTeX", entries, skipped)


def _bib_value(value: Any) -> str:
    """A field's value as text: outer braces or quotes gone; LaTeX stays for ``clean_text``."""
    text = str(value).strip()
    if len(text) >= 2 and text[0] + text[-1] in ("{}", '""'):
        text = text[1:-1]
    return text


def _entry(line: int, fields: dict[str, str]) -> Entry:
    ref = _ref_of(fields)
    authors = fields.get("authors", "")
    if authors:  # 'Lovelace, Ada and Alan Turing': BibTeX's separator is ' and '
        fields = fields | {"authors": [a.strip() for a in authors.split(" and ") if a.strip()]}
    try:
        record = _record(fields, ref)
    except ValueError:
        record = None
    return Entry(line, ref, record)


#: RIS tags and the field each one fills (the first tag given wins for single fields).
_RIS = {"TI": "title", "T1": "title", "CT": "title", "AB": "abstract", "N2": "abstract",
        "AU": "authors", "A1": "authors", "PY": "year", "Y1": "year", "DA": "year",
        "T2": "venue", "JO": "venue", "JF": "venue", "BT": "venue", "DO": "doi", "UR": "url",
        "L1": "pdf", "N1": "note", "M3": "note"}  # fmt: skip
_RIS_LINE = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")


def _ris(text: str) -> Library:
    entries, skipped = [], []
    fields: dict[str, Any] | None = None
    start = last = 0
    for n, raw in enumerate(text.splitlines(), 1):
        m = _RIS_LINE.match(raw.rstrip())
        if m is None:
            if fields is not None and last and raw.strip():  # a wrapped long value goes on
                key = _RIS.get(last)
                if key and key != "authors" and isinstance(fields.get(key), str):
                    fields[key] += " " + raw.strip()
            continue
        tag, value = m.group(1), (m.group(2) or "").strip()
        if tag == "TY":
            if fields is not None:
                skipped.append(Skipped(start, "unreadable RIS: no ER line before the next TY"))
            fields, start, last = {}, n, tag
        elif tag == "ER":
            if fields is not None:
                entries.append(_ris_entry(start, fields))
            fields, last = None, 0
        elif fields is not None and (key := _RIS.get(tag)):
            last = tag
            if key == "authors":
                fields.setdefault(key, []).append(value)
            elif key in ("url", "pdf", "note"):
                fields[key] = f"{fields.get(key, '')} {value}".strip()
            else:
                fields.setdefault(key, value)
        else:
            last = 0
    if fields is not None:
        skipped.append(Skipped(start, "unreadable RIS: the file ends inside this entry (no ER)"))
    return _library("RIS", entries, skipped)


def _ris_entry(line: int, fields: dict[str, Any]) -> Entry:
    if "pdf" in fields:
        fields["url"] = f"{fields.get('url', '')} {fields.pop('pdf')}".strip()
    authors = fields.pop("authors", [])
    entry = _entry(line, fields)
    if entry.record is not None and authors:
        entry = replace(entry, record=replace(entry.record, authors=tuple(authors)[:100]))
    return entry


#: Zotero's CSV column names (and the plain ones other tools write) for each field.
_CSV = {"title": "title", "abstract note": "abstract", "abstract": "abstract",
        "author": "authors", "authors": "authors", "publication year": "year", "year": "year",
        "publication title": "venue", "proceedings title": "venue", "venue": "venue",
        "doi": "doi", "url": "url", "extra": "extra", "notes": "note", "arxiv": "arxiv"}  # fmt: skip


def _csv(text: str) -> Library:
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip().lower() for h in next(reader)]
    except (StopIteration, csv.Error):
        raise LibraryError("The CSV file has no header line.") from None
    cols = {i: _CSV[h] for i, h in enumerate(header) if h in _CSV}
    if "title" not in cols.values():
        raise LibraryError(
            "The CSV file has no Title column (Zotero: File → Export Library… → CSV)."
        )
    entries, skipped = [], []
    line = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error:
            skipped.append(Skipped(line, "unreadable CSV row (a quote left open?)"))
            break
        if any(c.strip() for c in row):
            fields = {key: row[i] for i, key in cols.items() if i < len(row) and row[i].strip()}
            authors = fields.pop("authors", "")
            entry = _entry(line, fields)
            names = tuple(a.strip() for a in authors.split(";") if a.strip())[:100]
            if entry.record is not None and names:  # Zotero: 'Lovelace, Ada; Turing, Alan'
                entry = replace(entry, record=replace(entry.record, authors=names))
            entries.append(entry)
        line = reader.line_num + 1
    return _library("CSV", entries, skipped)


_SLACK_LINK = re.compile(r"<([^|>\s]+)(?:\|[^>]*)?>")


def _ids(text: str) -> Library:
    entries, skipped = [], []
    for n, raw in enumerate(text.splitlines(), 1):
        if raw.lstrip().startswith("#"):
            continue
        line = _SLACK_LINK.sub(r"\1", raw)  # '<https://…|the KDD paper>': the link alone
        for token in re.split(r"[\s,]+", line.strip()):
            if not token:
                continue
            ref = parse_ref(token)
            if ref is None:
                shown = token if len(token) <= 40 else token[:40] + "…"
                skipped.append(Skipped(n, f"unreadable: {shown!r} is not an arXiv id, DOI or link"))
            else:
                entries.append(Entry(n, ref))
    return _library("id list", entries, skipped)


_READERS = {"BibTeX": _bibtex, "RIS": _ris, "CSV": _csv, "id list": _ids}


def _library(fmt: str, entries: list[Entry], skipped: list[Skipped]) -> Library:
    """The first ``MAX_ENTRIES`` entries; the rest are skipped for the limit."""
    over = entries[MAX_ENTRIES:]
    cut = [Skipped(e.line, f"over the limit of {MAX_ENTRIES:,} entries per file") for e in over]
    return Library(
        fmt, tuple(entries[:MAX_ENTRIES]), tuple(sorted(skipped, key=lambda s: s.line)) + tuple(cut)
    )


def _deduplicated(library: Library) -> Library:
    """Entries without a title or id, and repeats of an earlier entry, moved to the skipped."""
    seen: dict[str, int] = {}
    kept, skipped = [], list(library.skipped)
    for e in library.entries:
        if not e.ref and e.record is None:
            skipped.append(Skipped(e.line, "no title"))
            continue
        keys = list(e.ref.keys())
        if e.record is not None:
            keys.append("title:" + normalize_title(e.record.title))
        first = next((seen[k] for k in keys if k in seen), None)
        if first is not None:
            skipped.append(Skipped(e.line, f"duplicate of the entry on line {first}"))
            continue
        seen.update(dict.fromkeys(keys, e.line))
        kept.append(e)
    return Library(library.format, tuple(kept), tuple(sorted(skipped, key=lambda s: s.line)))
