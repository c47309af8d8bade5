"""The readers of `/papers import`: BibTeX (bibtexparser), RIS and CSV (small line readers that
keep line numbers for the reasons) and id lists; each gives a ``Library``. No I/O."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from digest.errors import DigestError
from digest.ingest.parse import decode
from digest.library.entries import (
    FORMATS,
    MAX_IMPORT_BYTES,
    Entry,
    Library,
    LibraryError,
    Skipped,
    capped,
    make_entry,
)
from digest.text.hashes import normalize_title
from digest.text.paper_refs import Ref, parse_ref


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
        entries.append(make_entry(e.start_line + 1, f))
    entries.sort(key=lambda x: x.line)
    return capped("BibTeX", entries, skipped)


def _bib_value(value: Any) -> str:
    """A field's value as text: outer braces or quotes gone; LaTeX stays for ``clean_text``."""
    text = str(value).strip()
    if len(text) >= 2 and text[0] + text[-1] in ("{}", '""'):
        text = text[1:-1]
    return text


#: RIS tags and the field each one fills (the first tag given wins for single fields).
_RIS = {
    "TI": "title",
    "T1": "title",
    "CT": "title",
    "AB": "abstract",
    "N2": "abstract",
    "AU": "authors",
    "A1": "authors",
    "PY": "year",
    "Y1": "year",
    "DA": "year",
    "T2": "venue",
    "JO": "venue",
    "JF": "venue",
    "BT": "venue",
    "DO": "doi",
    "UR": "url",
    "L1": "pdf",
    "N1": "note",
    "M3": "note",
}
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
    return capped("RIS", entries, skipped)


def _ris_entry(line: int, fields: dict[str, Any]) -> Entry:
    if "pdf" in fields:
        fields["url"] = f"{fields.get('url', '')} {fields.pop('pdf')}".strip()
    authors = fields.pop("authors", [])
    entry = make_entry(line, fields)
    if entry.record is not None and authors:
        entry = replace(entry, record=replace(entry.record, authors=tuple(authors)[:100]))
    return entry


#: Zotero's CSV column names (and the plain ones other tools write) for each field.
_CSV = {
    "title": "title",
    "abstract note": "abstract",
    "abstract": "abstract",
    "author": "authors",
    "authors": "authors",
    "publication year": "year",
    "year": "year",
    "publication title": "venue",
    "proceedings title": "venue",
    "venue": "venue",
    "doi": "doi",
    "url": "url",
    "extra": "extra",
    "notes": "note",
    "arxiv": "arxiv",
}


def _csv(text: str) -> Library:
    lines = io.StringIO(text).readlines()  # '\n' ends a line here, as in csv ('\u2028' does not)
    reader = csv.reader(lines, strict=True)
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
    for line, row in _csv_rows(lines, reader.line_num, skipped):
        if any(c.strip() for c in row):
            fields = {key: row[i] for i, key in cols.items() if i < len(row) and row[i].strip()}
            authors = fields.pop("authors", "")
            entry = make_entry(line, fields)
            names = tuple(a.strip() for a in authors.split(";") if a.strip())[:100]
            if entry.record is not None and names:  # Zotero: 'Lovelace, Ada; Turing, Alan'
                entry = replace(entry, record=replace(entry.record, authors=names))
            entries.append(entry)
    return capped("CSV", entries, skipped)


#: The longest cell a library CSV may hold (csv's default limit). Checked here, not left to
#: ``csv.field_size_limit``: that is process-wide, and a CSV ingest in the same process raises it.
MAX_CSV_CELL = 131_072
_OVER = f"a cell over the CSV limit of {MAX_CSV_CELL:,} characters"


def _csv_rows(
    lines: list[str], done: int, skipped: list[Skipped]
) -> Iterator[tuple[int, list[str]]]:
    """(line, row) of each row after the first ``done`` lines. Read strictly: a quote left open
    would otherwise swallow the rows after it into one cell. An unreadable row is skipped with
    its line, and reading goes on from the line after the one it starts on."""
    while done < len(lines):
        reader = csv.reader(lines[done:], strict=True)
        start = done  # lines before the row being read
        try:
            for row in reader:
                if any(len(cell) > MAX_CSV_CELL for cell in row):
                    skipped.append(Skipped(start + 1, _OVER))
                else:
                    yield start + 1, row
                start = done + reader.line_num
            return
        except csv.Error as exc:
            why = _OVER if "field larger" in str(exc) else "unreadable CSV row (a quote left open?)"
            skipped.append(Skipped(start + 1, why))
            done = start + 1


_SLACK_LINK = re.compile(r"<([^|>\s]+)(?:\|[^>]*)?>")


#: A stored paper's own id ('neurips-928c3ba0ef8b', 'syn-gnn-0'): `subscribe like:` takes them.
_PAPER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:\-]{2,127}")


def _ids(text: str) -> Library:
    """Pasted ids, numbered by their place in the list (a paste is often one line)."""
    entries, skipped = [], []
    item = 0
    for raw in text.splitlines():
        if raw.lstrip().startswith("#"):
            continue
        line = _SLACK_LINK.sub(r"\1", raw)  # '<https://…|the KDD paper>': the link alone
        for token in re.split(r"[\s,]+", line.strip()):
            if not token:
                continue
            item += 1
            ref = parse_ref(token)
            if ref is None and _PAPER_ID.fullmatch(token) and re.search(r"\d", token):
                ref = Ref(paper_id=token)  # a word has no digit: 'hello' stays unreadable
            if ref is None:
                shown = token if len(token) <= 40 else token[:40] + "…"
                skipped.append(
                    Skipped(item, f"unreadable: {shown!r} is not a paper id, arXiv id, DOI or link")
                )
            else:
                entries.append(Entry(item, ref))
    return capped("id list", entries, skipped)


READERS = {"BibTeX": _bibtex, "RIS": _ris, "CSV": _csv, "id list": _ids}


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
    library = READERS[kind](text)
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
            where = f"item {first}" if library.unit == "item" else f"the entry on line {first}"
            skipped.append(Skipped(e.line, f"duplicate of {where}"))
            continue
        seen.update(dict.fromkeys(keys, e.line))
        kept.append(e)
    return Library(library.format, tuple(kept), tuple(sorted(skipped, key=lambda s: s.line)))
