"""Ingest use case: resolve a source, fetch it, parse it, upsert into the store, report."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from digest.errors import IngestError
from digest.ingest import SourceConfig, fetch
from digest.ingest.feeds import parse_arxiv_feed, parse_openreview_notes
from digest.ingest.parse import Parsed, decode, parse_csv, parse_jsonl, parse_neurips_list
from digest.models import PaperRecord, ParseProblem
from digest.store import Store

FORMATS = ("auto", "neurips-list", "jsonl", "csv", "arxiv", "arxiv-rss", "openreview")


@dataclass
class IngestReport:
    """The outcome of ingesting one source."""

    source: str
    parsed: int = 0
    added: int = 0
    merged: int = 0
    unchanged: int = 0
    updated: int = 0
    problems: list[ParseProblem] = field(default_factory=list)
    added_ids: list[str] = field(default_factory=list)
    updated_ids: list[str] = field(default_factory=list)
    #: Abstractive TL;DR lines written after this source (None: no LLM endpoint configured).
    tldrs: int | None = None


PREFIXES = {"arxiv": "QUERY", "arxiv-rss": "CATEGORY", "openreview": "VENUE_ID"}
EXAMPLES = {
    "arxiv": "arxiv:cat:cs.LG",
    "arxiv-rss": "arxiv-rss:cs.LG",
    "openreview": "openreview:NeurIPS.cc/2026/Conference",
}
#: Suffixes of saved feeds and API answers: with a network format they name a file, not a query.
SAVED_SUFFIXES = (".xml", ".atom", ".rss", ".json")


def detect_format(source: str, fmt: str = "auto") -> tuple[str, str]:
    """(format, location) for a CLI source like ``papers.jsonl`` or ``arxiv:cat:cs.LG``."""
    if fmt not in FORMATS:
        raise IngestError(f"Unknown format {fmt!r}; choose one of {', '.join(FORMATS)}.")
    for prefix in ("arxiv-rss", "arxiv", "openreview"):
        if source.startswith(prefix + ":"):
            where = source[len(prefix) + 1 :]
            if not where.strip():  # said here, not as a network error or an empty feed
                raise IngestError(
                    f"{prefix}: needs a {PREFIXES[prefix]} after the colon "
                    f"(e.g. {EXAMPLES[prefix]})."
                )
            return (prefix if fmt == "auto" else fmt), where
    scheme = re.match(r"([A-Za-z][\w-]+):", source)
    if scheme and not Path(source).exists():
        known = ", ".join(f"{p}:{what}" for p, what in PREFIXES.items())
        raise IngestError(
            f"Unknown source prefix '{scheme.group(1)}:'; sources are files or {known} "
            "(e.g. arxiv:cat:cs.LG)."
        )
    if fmt != "auto":
        return fmt, source
    suffix = Path(source).suffix.lower()
    if suffix in SAVED_SUFFIXES and (sniffed := _sniff(source)):
        return sniffed, source
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl", source
    if suffix in (".csv", ".tsv"):
        return "csv", source
    if suffix in (".txt", ".md", ""):
        return "neurips-list", source
    raise IngestError(f"Cannot tell the format of {source!r}; pass --format.")


def _sniff(path: str) -> str | None:
    """The format of a saved arXiv feed or OpenReview answer, from its first bytes (None: other)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    except OSError:
        return None  # reading it later says what is wrong
    if head.startswith(b"<"):
        return "arxiv-rss" if b"<rss" in head or b"<rdf" in head else "arxiv"
    if head.startswith(b"{") and re.search(rb'^\{\s*"(notes|count)"', head):
        return "openreview"
    return None


def _read_file(path: str) -> bytes:
    p = Path(path)
    if not p.exists():
        raise IngestError(f"No such file: {path}")
    if p.is_dir():
        raise IngestError(f"{path} is a folder, not a file.")
    try:
        return p.read_bytes()
    except OSError as exc:
        raise IngestError(f"Cannot read {path}: {exc.strerror}") from exc


def _parse_openreview_file(text: str, path: str) -> Parsed:
    """A saved OpenReview API answer: ``{"notes": [...]}`` or a bare list of notes."""
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(f"{path} is not JSON ({exc.msg}, line {exc.lineno}).") from exc
    if isinstance(payload, list):
        payload = {"notes": payload}
    if not isinstance(payload, dict) or not isinstance(payload.get("notes"), list):
        raise IngestError(f"{path} holds no OpenReview 'notes' list.")
    return parse_openreview_notes(payload)


def _parse_file(fmt: str, path: str) -> Parsed:
    data = _read_file(path)
    if fmt in ("arxiv", "arxiv-rss"):  # a saved feed: the parser the fetcher uses
        return parse_arxiv_feed(data, name=path)
    text, problems = decode(data, path)
    if fmt == "openreview":
        parsed = _parse_openreview_file(text, path)
    else:
        parser = {"neurips-list": parse_neurips_list, "jsonl": parse_jsonl}.get(fmt)
        parsed = parser(text) if parser else parse_csv(text, name=path)
    parsed.problems[:0] = problems
    if not parsed.records and parsed.problems:
        first = parsed.problems[0]
        raise IngestError(f"{path}: no paper could be read (line {first.line}: {first.message}).")
    return parsed


def _names_a_file(source: str, where: str) -> bool:
    """With a network format, an unprefixed source that is a file (or looks like one) is read."""
    if where != source:  # arxiv:QUERY and friends always go to the network
        return False
    return Path(where).exists() or Path(where).suffix.lower() in SAVED_SUFFIXES


def _parse_network(fmt: str, where: str, cfg: SourceConfig) -> Iterable[Parsed]:
    client = fetch.PoliteClient(min_interval=cfg.min_interval)
    try:
        if fmt == "arxiv":
            for page in fetch.arxiv_pages(client, cfg.arxiv_base_url, where, cfg.arxiv_max_results):
                yield parse_arxiv_feed(page)
        elif fmt == "arxiv-rss":
            yield parse_arxiv_feed(fetch.arxiv_rss(client, cfg.arxiv_rss_url, where))
        else:
            for payload in fetch.openreview_pages(client, cfg.openreview_base_url, where):
                yield parse_openreview_notes(payload)
    finally:
        client.close()


def ingest(
    store: Store,
    source: str,
    fmt: str = "auto",
    cfg: SourceConfig | None = None,
    progress: Callable[[int], None] | None = None,
) -> IngestReport:
    """Read ``source`` into ``store``; re-ingesting the same source adds nothing."""
    fmt, where = detect_format(source, fmt)
    cfg = cfg or SourceConfig()
    if fmt in PREFIXES and not _names_a_file(source, where):
        pages = _parse_network(fmt, where, cfg)
    else:
        pages = [_parse_file(fmt, where)]
    report = IngestReport(source=source)
    for page in pages:
        report.problems.extend(page.problems)
        _store_records(store, page.records, report, progress)
    return report


def _store_records(
    store: Store,
    records: list[PaperRecord],
    report: IngestReport,
    progress: Callable[[int], None] | None,
) -> None:
    counts = store.papers.upsert(records, progress=progress)
    report.parsed += len(records)
    report.added += counts.added
    report.merged += counts.merged
    report.unchanged += counts.unchanged
    report.updated += counts.updated
    report.added_ids.extend(counts.added_ids)
    report.updated_ids.extend(counts.updated_ids)
