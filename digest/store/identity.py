"""When two records are one paper: ids, arXiv versions, and titles backed by agreeing abstracts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from digest.text.hashes import normalize_title

#: Abstracts shorter than this are too generic to prove two records are one paper.
MIN_HASH_CHARS = 200
#: Word-set Jaccard at or above which two abstracts under one title are one paper's versions.
#: Distinct NeurIPS 2023 abstracts never come near it (the highest is in
#: docs/benchmarks-history.md, printed by the retired bench/dedup.py).
AGREE_JACCARD = 0.5


def _words(text: str) -> set[str]:
    return set(normalize_title(text).split())


def abstracts_agree(a: str, b: str) -> bool:
    """True when one side has no abstract or both share most of their words (a revised version).

    An empty side agrees only once: the store gives that paper the first abstract that joins it
    (``paper_rows._replaces``), and from then on two abstracts must share their words."""
    if not a.strip() or not b.strip():
        return True
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / max(1, len(wa | wb)) >= AGREE_JACCARD


@dataclass
class Keys:
    """In-memory lookup of existing papers by every identity a source may carry."""

    by_arxiv: dict[str, str] = field(default_factory=dict)
    by_openreview: dict[str, str] = field(default_factory=dict)
    by_hash: dict[str, str] = field(default_factory=dict)
    by_title: dict[str, list[str]] = field(default_factory=dict)  # one title, several papers
    ids: set[str] = field(default_factory=set)
    cite_keys: set[str] = field(default_factory=set)  # BibTeX keys issued: a new one differs

    def add(self, row: Any) -> None:
        """Index a stored row (or a ``KeyView`` of a row added in this batch)."""
        self.ids.add(row.id)
        if getattr(row, "cite_key", None):  # rows read before migration 0007 (cite keys) have none
            self.cite_keys.add(row.cite_key)
        if row.arxiv_id:
            self.by_arxiv[row.arxiv_id] = row.id
        if row.openreview_id:
            self.by_openreview[row.openreview_id] = row.id
        if row.abstract_len >= MIN_HASH_CHARS:
            self.by_hash[row.content_hash] = row.id
        if not row.title_derived and len(row.title_key) > 15:
            self.by_title.setdefault(row.title_key, []).append(row.id)

    def find(self, row: Any, load: Callable[[str], Any]) -> str | None:
        """The id of a stored paper that is the same work as ``row`` (``load`` reads a stored row)."""
        if row.id in self.ids:
            return row.id
        for table, key in ((self.by_arxiv, row.arxiv_id), (self.by_openreview, row.openreview_id)):
            if key and key in table:
                return table[key]
        hashed = row.content_hash if len(row.abstract) >= MIN_HASH_CHARS else None
        if hashed in self.by_hash and _compatible(load(self.by_hash[hashed]), row):
            return self.by_hash[hashed]  # the same long abstract, unless two arXiv ids say no
        if row.title_derived:
            return None
        # A title alone is weak evidence: distinct papers share titles ("Attention is all you
        # need again"), so the abstracts must agree and no id of the same kind may differ.
        # A paper with an agreeing abstract beats one stored without any: the empty one would
        # otherwise take this record's abstract and the two would become duplicates.
        bare = None
        for candidate in self.by_title.get(row.title_key, ()):
            old = load(candidate)
            if not _compatible(old, row) or not abstracts_agree(old.abstract, row.abstract):
                continue
            if old.abstract.strip() or not row.abstract.strip():
                return candidate
            bare = bare or candidate
        return bare


def _compatible(old: Any, new: Any) -> bool:
    """False when both carry an id of the same kind and the ids differ (two arXiv papers)."""
    return all(
        not (getattr(old, k) and getattr(new, k)) or getattr(old, k) == getattr(new, k)
        for k in ("arxiv_id", "openreview_id")
    )


class KeyView:
    """The identity columns of a new row, shaped like the rows ``Keys`` loads."""

    def __init__(self, row: Any) -> None:
        self.id, self.arxiv_id, self.openreview_id = row.id, row.arxiv_id, row.openreview_id
        self.content_hash, self.title_key = row.content_hash, row.title_key
        self.title_derived, self.abstract_len = row.title_derived, len(row.abstract)
        self.cite_key = getattr(row, "cite_key", None)
