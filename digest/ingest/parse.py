"""Pure parsers: bytes or text of a source in, paper records and per-line problems out. No I/O."""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from digest.errors import IngestError
from digest.ingest.fields import (
    MAX_ID_CHARS,
    MAX_TITLE_CHARS,
    MAX_VENUE_CHARS,
    cut,
    plain,
    safe_links,
    split_list,
    year_note,
)
from digest.ingest.fields import year as year_of
from digest.models import Links, PaperRecord, ParseProblem
from digest.text.hashes import derived_id
from digest.text.headline import derive_title
from digest.text.latex import MAX_ABSTRACT_CHARS, clean_text, clean_text_cut

MAX_TEXT_BYTES = 200_000  # raw abstracts above this are cut before cleaning


@dataclass
class Parsed:
    """Records parsed from one source, and the records that had to be skipped."""

    records: list[PaperRecord] = field(default_factory=list)
    problems: list[ParseProblem] = field(default_factory=list)


#: How binary files begin: PDF, gzip, zip (also docx/xlsx), PNG, JPEG, GIF, bzip2, xz, 7z, zstd,
#: ELF, SQLite. A PDF's first block may hold no NUL at all, so the bytes alone would not tell.
#: The signatures that are plain letters are matched in full (GIF87a, BZh91AY&SY), so a text that
#: happens to begin with "GIF8K: a benchmark" or "BZh…" is still read.
_MAGIC = (
    b"%PDF-",
    b"\x1f\x8b",
    b"PK\x03\x04",
    b"\x89PNG",
    b"\xff\xd8\xff",
    b"GIF87a",
    b"GIF89a",
    b"\xfd7zXZ",
    b"7z\xbc\xaf",
    b"\x28\xb5\x2f\xfd",
    b"\x7fELF",
    b"SQLite format 3\x00",
)
_BZIP2 = re.compile(rb"BZh[1-9]1AY&SY")
#: Control bytes text never holds (tab, newlines, form feed and escape excluded).
_CONTROL_BYTES = bytes(b for b in range(32) if b not in b"\t\n\r\x0b\x0c\x1b")


def _looks_binary(head: bytes) -> bool:
    """True for a binary file's first block: a known signature, or more than a few control
    bytes in it (1 in 100; compressed data has about 1 in 10). A stray NUL in a text export
    is one bad line, not a binary file: the parsers skip or clean that line."""
    head = head.lstrip(b"\xef\xbb\xbf")
    if head.startswith(_MAGIC) or _BZIP2.match(head):
        return True
    odd = len(head) - len(head.translate(None, _CONTROL_BYTES))
    # A short file has few bytes to judge by: a handful of stray NULs is still text.
    return odd > max(8, len(head) // 100)


def decode(data: bytes, name: str) -> tuple[str, list[ParseProblem]]:
    """Text of ``data`` (UTF-8, or UTF-16/32 with a BOM); binary files are refused, stray bad
    bytes replaced and reported."""
    if not data.strip():
        raise IngestError(f"{name} is empty.")
    if data.startswith(
        (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
    ):
        # Windows tools save 'Unicode' text as UTF-16 with a BOM: every other byte is a NUL.
        codec = (
            "utf-32" if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)) else "utf-16"
        )
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            raise IngestError(f"{name} starts like {codec.upper()} text but is not.") from None
        if not text.strip():
            raise IngestError(f"{name} is empty.")
        if _looks_binary(text[:8192].encode()):  # a binary file that starts like a BOM
            raise IngestError(f"{name} looks like a binary file, not text.")
        return text, []
    if _looks_binary(data[:8192]):
        raise IngestError(f"{name} looks like a binary file, not text.")
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        # Not UTF-8: most likely a Latin-1 / Windows-1252 export. Latin-1 reads every byte.
        line = data[: exc.start].count(b"\n") + 1
        problem = ParseProblem(line, "not UTF-8 (first bad byte here); read as Latin-1", True)
        return data.decode("latin-1"), [problem]


def make_record(
    *,
    source: str,
    abstract: str,
    title: str = "",
    id: str = "",
    authors: Any = None,
    keywords: Any = None,
    venue: str | None = None,
    year: Any = None,
    links: Links | None = None,
    published: date | None = None,
    notes: list[str] | None = None,
) -> PaperRecord:
    """A record with clean text, a derived title when none is given and a stable id.

    ``notes`` collects what was changed on the way (a field cut, a broken character dropped).
    """
    notes = [] if notes is None else notes
    full = plain(abstract, "abstract", notes)
    raw = full[:MAX_TEXT_BYTES]
    clean, was_cut = clean_text_cut(raw)
    if was_cut or len(full) > MAX_TEXT_BYTES:
        notes.append(f"abstract cut to {MAX_ABSTRACT_CHARS:,} characters (it had {len(full):,})")
    given = plain(title, "title", notes)
    real_title = cut(clean_text(given), MAX_TITLE_CHARS, "title", notes, len(given))
    if not clean and not real_title:
        raise ValueError("record has neither title nor abstract")
    given_id = cut(plain(id, "id", notes).strip(), MAX_ID_CHARS, "id", notes)
    return PaperRecord(
        id=given_id or derived_id(source, clean or real_title),
        source=source,
        title=real_title or derive_title(clean),
        title_derived=not real_title,
        abstract_raw=raw,
        abstract=clean,
        authors=split_list(authors, "authors", notes),
        keywords=split_list(keywords, "keywords", notes),
        venue=cut(plain(venue, "venue", notes), MAX_VENUE_CHARS, "venue", notes) or None,
        year=year_of(year) or year_of(venue if isinstance(venue, str) else None),
        links=safe_links(links or Links(), notes),
        published=published,
    )


def parse_neurips_list(text: str, venue: str = "NeurIPS 2026") -> Parsed:
    """The NeurIPS list format: a header line, then one abstract per blank-line-separated paragraph."""
    out = Parsed()
    line = 1
    header_done = False
    for block in re.split(r"(\n\s*\n)", text):
        if not block.strip() or block.isspace():
            line += block.count("\n")
            continue
        start = line
        line += block.count("\n")
        lines = block.strip("\n").split("\n")
        if not header_done:
            header_done = True
            lines = lines[1:]  # the header is the first line of the file, not a paper
            if not "".join(lines).strip():
                continue
        notes: list[str] = []
        try:
            out.records.append(
                make_record(
                    source="neurips", abstract=" ".join(lines), venue=venue, year=venue, notes=notes
                )
            )
        except ValueError as exc:
            out.problems.append(ParseProblem(start, str(exc)))
            continue
        warn(out, start, notes)
    return out


def _from_mapping(row: dict[str, Any], source: str, notes: list[str]) -> PaperRecord:
    """A record from a JSON object or CSV row with loosely named columns."""
    get = {str(k).strip().lower(): v for k, v in row.items() if k is not None}
    url = plain(get.get("url") or get.get("link") or get.get("abs_url"), "url", notes)
    pdf = plain(get.get("pdf") or get.get("pdf_url"), "pdf", notes) or None
    forum = url if "openreview.net" in url else None
    code = plain(get.get("code"), "code", notes) or None
    links = Links(pdf=pdf, abs=None if forum else (url or None), forum=forum, code=code)
    return make_record(
        source=source,
        id=str(get["id"]) if isinstance(get.get("id"), int) else get.get("id") or "",
        title=get.get("title") or "",
        abstract=get.get("abstract") or get.get("summary") or "",
        authors=get.get("authors"),
        keywords=get.get("keywords"),
        venue=get.get("venue"),
        year=get.get("year"),
        links=links,
        notes=notes,
    )


def warn(out: Parsed, line: int, notes: list[str]) -> None:
    """Report a stored record's notes under its line, each once."""
    out.problems.extend(ParseProblem(line, note, True) for note in dict.fromkeys(notes))


def _dedupe(out: Parsed, rows: Iterable[tuple[int, dict[str, Any]]], source: str) -> Parsed:
    """Build records from (line, mapping) pairs, reporting bad rows and repeated ids."""
    seen: dict[str, int] = {}
    for line, row in rows:
        notes: list[str] = []
        try:
            rec = _from_mapping(row, source, notes)
        except (ValueError, TypeError, AttributeError) as exc:
            out.problems.append(ParseProblem(line, f"skipped: {exc}"))
            continue
        if rec.id in seen:
            out.problems.append(
                ParseProblem(
                    line, f"duplicate id {rec.id!r} (first on line {seen[rec.id]}); kept the first"
                )
            )
            continue
        seen[rec.id] = line
        if not rec.abstract:
            notes.append("no abstract: stored with its title only")
        given = {str(k).strip().lower(): v for k, v in row.items()}.get("year")
        if note := year_note(given, rec.year):
            notes.append(note)
        warn(out, line, notes)
        out.records.append(rec)
    return out


def parse_jsonl(text: str, source: str = "jsonl") -> Parsed:
    """JSON Lines, one paper object a line."""
    out = Parsed()

    def rows() -> Iterable[tuple[int, dict[str, Any]]]:
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            if "\x00" in line:  # raw, not escaped: JSON refuses it; say what it is
                out.problems.append(ParseProblem(n, "a NUL byte in the line (binary data?)"))
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                out.problems.append(ParseProblem(n, f"invalid JSON: {exc.msg}"))
                continue
            if not isinstance(obj, dict):
                out.problems.append(ParseProblem(n, "expected a JSON object"))
                continue
            yield n, obj

    return _dedupe(out, rows(), source)


#: A column name in a CSV header: a short word or phrase, never a sentence, quote or brace.
_COLUMN = re.compile(r"[A-Za-z_#][\w .\-#()/]{0,39}")


def _csv_header(reader: csv.DictReader, name: str) -> None:
    """Refuse a file whose first line is not a header naming an abstract column.

    A JSONL file read as CSV must not have its first record echoed back as "columns".
    """
    try:
        names = [c.strip() for c in (reader.fieldnames or []) if c and c.strip()]
    except csv.Error:  # a quote in the middle of the first line: not a header at all
        names = []
    if not names or not all(_COLUMN.fullmatch(n) for n in names):
        raise IngestError(
            f"{name} does not look like CSV with a header row: its first line should name the "
            "comma-separated columns (e.g. title,abstract,authors)."
        )
    if not {n.lower() for n in names} & {"abstract", "summary"}:
        raise IngestError(
            f"{name}: CSV has no 'abstract' column (nor 'summary'); "
            f"its header row names {', '.join(names)}."
        )


def parse_csv(text: str, source: str = "csv", name: str = "CSV file") -> Parsed:
    """CSV with a header naming title/abstract/authors/keywords/url columns."""
    csv.field_size_limit(MAX_TEXT_BYTES * 60)
    reader = csv.DictReader(io.StringIO(text), strict=True)
    _csv_header(reader, name)
    out = Parsed()
    rows, start = [], reader.line_num + 1
    try:
        for row in reader:
            rows.append((start, row))
            start = reader.line_num + 1
    except csv.Error as exc:  # typically an unclosed quote: the rest of the file is one field
        last = text.count("\n") + (not text.endswith("\n"))
        out.problems.append(
            ParseProblem(
                start, f"malformed CSV ({exc}; an unclosed quote?): lines {start}-{last} not read"
            )
        )
    return _dedupe(out, rows, source)
