"""Pure parsers for network sources: arXiv Atom/RSS and OpenReview API v2 notes."""

from __future__ import annotations

import re
from datetime import date
from typing import Any
from xml.sax import SAXException

import feedparser

from digest.errors import IngestError
from digest.ingest.parse import Parsed, make_record, warn
from digest.models import Links, PaperRecord, ParseProblem
from digest.text.arxiv_ids import arxiv_base_id


def _looks_like_html(data: bytes) -> bool:
    head = data[:512].lstrip().lower()
    return head.startswith(b"<!doctype html") or head.startswith(b"<html")


def _entry_date(entry: Any) -> date | None:
    parsed = entry.get("published_parsed") or entry.get("updated_parsed")
    return date(*parsed[:3]) if parsed else None


_CHAR_REF = re.compile(rb"&#(?:[xX]([0-9a-fA-F]{1,8})|([0-9]{1,10}));")


def _drop_surrogate_refs(data: bytes) -> tuple[bytes, list[ParseProblem]]:
    """``data`` without character references to lone surrogates (``&#xD800;``): half a
    character, which feedparser would crash on and no UTF-8 text can hold; noted at its line."""
    found: list[int] = []

    def drop(m: re.Match[bytes]) -> bytes:
        code = int(m.group(1), 16) if m.group(1) else int(m.group(2))
        if 0xD800 <= code <= 0xDFFF:
            found.append(m.start())
            return b""
        return m.group(0)

    data = _CHAR_REF.sub(drop, data)
    if not found:
        return data, []
    line = data[: found[0]].count(b"\n") + 1  # offsets shift after a drop: the first is exact
    note = (
        f"{len(found)} reference(s) to a lone surrogate (e.g. &#xD800;, half a character): dropped"
    )
    return data, [ParseProblem(line, note, warning=True)]


def parse_arxiv_feed(data: bytes, name: str | None = None) -> Parsed:
    """arXiv export API Atom or daily RSS: one record per entry, ids with their version.

    ``name`` is the saved file the feed comes from (errors then name it), else it came from arXiv.
    """
    who = f"{name} is" if name else "arXiv answered with"
    if _looks_like_html(data):
        raise IngestError(f"{who} an HTML page instead of a feed.")
    data, dropped = _drop_surrogate_refs(data)
    feed = feedparser.parse(data)
    # A truncated or garbled page still yields partial entries; refuse it rather than half-ingest.
    if feed.bozo and isinstance(feed.bozo_exception, SAXException):
        raise IngestError(f"{name or 'arXiv feed'} is not valid XML: {feed.bozo_exception}")
    if not feed.entries and feed.bozo:
        raise IngestError(f"{who} something that is not a feed: {feed.bozo_exception}")
    out = Parsed(problems=dropped)
    for n, entry in enumerate(feed.entries, 1):
        base = arxiv_base_id(entry.get("id") or entry.get("link") or "")
        if entry.get("title", "").strip().lower() == "error" or not base:
            out.problems.append(
                ParseProblem(n, f"entry without an arXiv id: {entry.get('id', '')[:80]!r}")
            )
            continue
        raw_id = entry.get("id") or entry.get("link") or ""
        version = re.search(rf"{re.escape(base)}(v\d+)", raw_id)
        notes: list[str] = []
        try:  # the id keeps its version (2611.01234v2): the store keeps the newest version's text
            tag = version.group(1) if version else ""
            out.records.append(_arxiv_record(entry, base, tag, notes))
        except ValueError as exc:
            out.problems.append(ParseProblem(n, str(exc)))
            continue
        warn(out, n, notes)
    return out


def _arxiv_record(
    entry: Any, base: str, version: str = "", notes: list[str] | None = None
) -> PaperRecord:
    """One feed entry as a record (Atom and RSS spell authors, links and dates differently)."""
    # The RSS feed prefixes the abstract with "arXiv:ID Announce Type: new Abstract:".
    summary = re.sub(
        r"^arXiv:\S+\s+Announce Type:\s*\S+\s+Abstract:\s*", "", entry.get("summary", "")
    )
    authors = [a.get("name", "") for a in entry.get("authors", [])] or entry.get("author", "")
    pdf = next(
        (lk.href for lk in entry.get("links", []) if lk.get("type") == "application/pdf"), None
    )
    published = _entry_date(entry)
    return make_record(
        source="arxiv",
        id=base + version,
        title=entry.get("title", ""),
        abstract=summary,
        authors=authors,
        keywords=[t.get("term") for t in entry.get("tags", []) if t.get("term")],
        links=Links(
            pdf=pdf or f"https://arxiv.org/pdf/{base}", abs=f"https://arxiv.org/abs/{base}"
        ),
        published=published,
        year=published.year if published else None,
        notes=notes,
    )


def _value(content: dict[str, Any], key: str) -> Any:
    """OpenReview v2 wraps every field as {"value": ...}; v1 did not."""
    item = content.get(key)
    return item.get("value") if isinstance(item, dict) else item


def parse_openreview_notes(payload: Any, base: str = "https://openreview.net") -> Parsed:
    """One page of ``/notes`` from OpenReview API v2."""
    if not isinstance(payload, dict) or not isinstance(payload.get("notes"), list):
        raise IngestError("OpenReview answered without a 'notes' list.")
    out = Parsed()
    for n, note in enumerate(payload["notes"], 1):
        content = note.get("content") or {}
        forum = note.get("forum") or note.get("id")
        pdf = _value(content, "pdf")
        venue = _value(content, "venue")
        notes: list[str] = []
        try:
            out.records.append(
                make_record(
                    source="openreview",
                    id=note.get("id", ""),
                    title=_value(content, "title") or "",
                    abstract=_value(content, "abstract") or "",
                    authors=_value(content, "authors"),
                    keywords=_value(content, "keywords"),
                    venue=venue,
                    year=venue,
                    links=Links(
                        pdf=f"{base}{pdf}" if pdf and str(pdf).startswith("/") else pdf,
                        forum=f"{base}/forum?id={forum}" if forum else None,
                        code=_value(content, "code"),
                    ),
                    notes=notes,
                )
            )
        except (ValueError, TypeError) as exc:
            out.problems.append(ParseProblem(n, f"note {note.get('id')!r}: {exc}"))
            continue
        warn(out, n, notes)
    return out
