"""How a source record becomes a paper row, and how a second record of the same paper changes it:
real titles beat derived ones, later versions replace earlier text, links and ids are unioned."""

from __future__ import annotations

from datetime import datetime

from digest.models import PaperRecord
from digest.store.schema import PaperRow
from digest.text.arxiv_ids import arxiv_ref, paper_arxiv_ref
from digest.text.bibtex import make_key
from digest.text.hashes import content_hash, normalize_title


def to_row(rec: PaperRecord, now: datetime) -> PaperRow:
    links = rec.links
    base, version = paper_arxiv_ref(rec.id, rec.source, links.abs, links.pdf) or (None, None)
    # An id that is an arXiv id (2611.00002v2) is stored without its version: one paper.
    id_is_arxiv = rec.source == "arxiv" or arxiv_ref(rec.id) is not None
    openreview = rec.id if rec.source == "openreview" else None
    return PaperRow(
        id=base if id_is_arxiv and base else rec.id,
        source=rec.source,
        title=rec.title,
        title_derived=rec.title_derived,
        title_key=normalize_title(rec.title)[:500],
        abstract_raw=rec.abstract_raw,
        abstract=rec.abstract,
        authors=list(rec.authors),
        keywords=list(rec.keywords),
        venue=rec.venue,
        year=rec.year,
        pdf_url=links.pdf,
        abs_url=links.abs,
        forum_url=links.forum,
        code_url=links.code,
        arxiv_id=base,
        arxiv_version=version,
        openreview_id=openreview,
        published=rec.published,
        ingested_at=now,
        content_hash=content_hash(rec.abstract),
    )


def merge(old: PaperRow, new: PaperRow) -> bool:
    """Fill ``old`` from ``new``: real titles beat derived ones, links and ids are unioned."""
    changed = False
    if old.title_derived and not new.title_derived:
        old.title, old.title_derived, old.title_key = new.title, False, new.title_key
        changed = True
    if old.arxiv_id is None and new.arxiv_id:
        # The version comes only with the id: a stored text of unknown version that a refused
        # record names must not be stamped with that record's (older) version number.
        old.arxiv_version = new.arxiv_version
    for attr in (
        "pdf_url",
        "abs_url",
        "forum_url",
        "code_url",
        "arxiv_id",
        "openreview_id",
        "venue",
        "year",
        "published",
    ):
        if getattr(old, attr) is None and getattr(new, attr) is not None:
            setattr(old, attr, getattr(new, attr))
            changed = True
    for attr in ("authors", "keywords"):
        if not getattr(old, attr) and getattr(new, attr):
            setattr(old, attr, getattr(new, attr))
            changed = True
    return changed


def _same_arxiv(old: PaperRow, new: PaperRow) -> bool:
    """Both rows name one arXiv paper, so their version numbers can be compared."""
    return bool(new.arxiv_id) and new.arxiv_id == old.arxiv_id


def _replaces(old: PaperRow, new: PaperRow) -> bool:
    """Whether ``new`` is a later (or corrected) text of ``old``, never an older version.

    The same id sent again replaces the text unless it is known to be older; another record of
    the same arXiv paper (a JSONL line with its arxiv.org link) replaces it only as a later version.
    A paper stored without an abstract takes the first record with one that joins it (once: after
    that, ``abstracts_agree`` needs the two abstracts to share their words).
    """
    if not old.abstract.strip() and new.abstract.strip():
        return True
    if _same_arxiv(old, new) and old.arxiv_version and new.arxiv_version:
        if new.arxiv_version != old.arxiv_version:
            return new.arxiv_version > old.arxiv_version
    elif _same_arxiv(old, new) and new.arxiv_version:
        return _beats_unknown_version(old, new)
    elif new.published and old.published and new.published < old.published:
        return False  # an older version (arXiv v1 after v2) never replaces a newer one
    return new.id == old.id


def _beats_unknown_version(old: PaperRow, new: PaperRow) -> bool:
    """Whether an explicit version replaces a stored text of unknown version (stored before 0006).

    Only a version above 1 with a strictly later date: v1 is never newer than anything, and arXiv
    feeds give every version v1's date, so an equal date says nothing about which text is newer.
    """
    later = bool(new.published and old.published and new.published > old.published)
    return (new.arxiv_version or 0) > 1 and later


def update_text(old: PaperRow, new: PaperRow) -> bool:
    """Give ``old`` the text and links of a later version or a re-sent id; True if it changed."""
    if not _replaces(old, new):
        return False
    newer = _same_arxiv(old, new) and (new.arxiv_version or 0) > (old.arxiv_version or 0)
    changed = False
    if newer:  # the new version's own links (…v2) and number replace the old ones
        for attr in ("arxiv_version", "abs_url", "pdf_url"):
            if getattr(new, attr) and getattr(new, attr) != getattr(old, attr):
                setattr(old, attr, getattr(new, attr))
                changed = True
    if not new.abstract or new.content_hash == old.content_hash:
        return changed
    old.abstract, old.abstract_raw, old.content_hash = (
        new.abstract,
        new.abstract_raw,
        new.content_hash,
    )
    if not new.title_derived or old.title_derived:
        old.title, old.title_derived, old.title_key = new.title, new.title_derived, new.title_key
    for attr in ("authors", "keywords"):
        if getattr(new, attr):
            setattr(old, attr, getattr(new, attr))
    return True


def fold(old: PaperRow, new: PaperRow) -> str:
    """Fold ``new``, another record of ``old``'s paper, into ``old``, as ingest does: 'updated'
    (new text), 'retitled' (a real title replaced a derived one), 'merged' (fields filled in) or
    'unchanged'."""
    if update_text(old, new):
        merge(old, new)
        return "updated"
    title = old.title
    if not merge(old, new):
        return "unchanged"
    return "retitled" if old.title != title else "merged"


def issue_key(row: PaperRow, taken: set[str]) -> str:
    """The BibTeX key a newly stored paper keeps for good (``bibtex.cite_key`` says why), with a
    longer id tag when a key already issued to another paper has the short one."""
    for chars in (4, 8, 40):
        key = make_key(row.id, row.title, row.authors or (), row.year, chars)
        if key not in taken:
            break
    taken.add(key)
    return key
