"""Pure parsers: bytes or text of a source in, paper records and per-line problems out. No I/O."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from digest.errors import IngestError
from digest.headline import derive_title
from digest.models import Links, PaperRecord, ParseProblem
from digest.text import clean_text, derived_id

MAX_TEXT_BYTES = 200_000  # raw abstracts above this are cut before cleaning


@dataclass
class Parsed:
    """Records parsed from one source, and the records that had to be skipped."""

    records: list[PaperRecord] = field(default_factory=list)
    problems: list[ParseProblem] = field(default_factory=list)


def decode(data: bytes, name: str) -> tuple[str, list[ParseProblem]]:
    """UTF-8 text of ``data``; binary files are refused, stray bad bytes replaced and reported."""
    if not data.strip():
        raise IngestError(f"{name} is empty.")
    if b"\x00" in data[:8192]:
        raise IngestError(f"{name} looks like a binary file, not text.")
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        # Not UTF-8: most likely a Latin-1 / Windows-1252 export. Latin-1 reads every byte.
        line = data[: exc.start].count(b"\n") + 1
        problem = ParseProblem(line, "not UTF-8 (first bad byte here); read as Latin-1", True)
        return data.decode("latin-1"), [problem]


def _split_list(value: Any, name: str) -> tuple[str, ...]:
    """Authors/keywords given as a list of text or as 'a, b and c' / 'a; b'; numbers fail."""
    if value is None:
        return ()
    if isinstance(value, list | tuple):
        items = [_plain(v, name).strip() for v in value]
        return tuple(v for v in items if v)
    parts = re.split(r";|,|\band\b|\|", _plain(value, name))
    return tuple(p.strip() for p in parts if p.strip())


def _plain(value: Any, name: str) -> str:
    """A text field: NUL characters go (PostgreSQL refuses them); numbers and objects fail.

    A number where text belongs (`"abstract": 123`) is a broken export, not a paper titled "123".
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        kind = (
            "a number" if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
        raise ValueError(f"{name!r} must be text, got {kind or type(value).__name__}")
    return value.replace("\x00", "")


def _year_note(value: Any) -> str | None:
    """The warning for a ``year`` given but holding no year (it is stored without one)."""
    if value is None or value == "" or _year(value) is not None:
        return None
    return f"'year' {str(value)[:20]!r} is not a year: stored without it"


def _year(value: Any) -> int | None:
    m = re.search(r"(19|20)\d\d", str(value or ""))
    return int(m.group(0)) if m else None


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
) -> PaperRecord:
    """A record with clean text, a derived title when none is given and a stable id."""
    raw = _plain(abstract, "abstract")[:MAX_TEXT_BYTES]
    clean = clean_text(raw)
    real_title = clean_text(_plain(title, "title"))[:500]
    if not clean and not real_title:
        raise ValueError("record has neither title nor abstract")
    return PaperRecord(
        id=_plain(id, "id").strip()[:128] or derived_id(source, clean or real_title),
        source=source,
        title=real_title or derive_title(clean),
        title_derived=not real_title,
        abstract_raw=raw,
        abstract=clean,
        authors=_split_list(authors, "authors"),
        keywords=_split_list(keywords, "keywords"),
        venue=_plain(venue, "venue")[:200] or None,
        year=_year(year) or _year(venue),
        links=links or Links(),
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
        try:
            out.records.append(
                make_record(source="neurips", abstract=" ".join(lines), venue=venue, year=venue)
            )
        except ValueError as exc:
            out.problems.append(ParseProblem(start, str(exc)))
    return out


def _from_mapping(row: dict[str, Any], source: str) -> PaperRecord:
    """A record from a JSON object or CSV row with loosely named columns."""
    get = {str(k).strip().lower(): v for k, v in row.items() if k is not None}
    url = _plain(get.get("url") or get.get("link") or get.get("abs_url"), "url")
    pdf = _plain(get.get("pdf") or get.get("pdf_url"), "pdf") or None
    forum = url if "openreview.net" in url else None
    code = _plain(get.get("code"), "code") or None
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
    )


def _dedupe(out: Parsed, rows: Iterable[tuple[int, dict[str, Any]]], source: str) -> Parsed:
    """Build records from (line, mapping) pairs, reporting bad rows and repeated ids."""
    seen: dict[str, int] = {}
    for line, row in rows:
        try:
            rec = _from_mapping(row, source)
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
            out.problems.append(ParseProblem(line, "no abstract: stored with its title only", True))
        if note := _year_note({str(k).strip().lower(): v for k, v in row.items()}.get("year")):
            out.problems.append(ParseProblem(line, note, True))
        out.records.append(rec)
    return out


def parse_jsonl(text: str, source: str = "jsonl") -> Parsed:
    """JSON Lines, one paper object a line."""
    out = Parsed()

    def rows() -> Iterable[tuple[int, dict[str, Any]]]:
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
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
