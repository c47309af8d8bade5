"""Keys and hashes of paper text: a title key two sources share, content hashes, derived ids."""

from __future__ import annotations

import hashlib
import re
import unicodedata


def normalize_title(title: str) -> str:
    """A key under which the same paper from two sources collides (case, accents, punctuation)."""
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def content_hash(text: str) -> str:
    """Stable hash of a paper's text, for change detection and derived ids."""
    return hashlib.sha256(normalize_title(text).encode()).hexdigest()


def derived_id(prefix: str, abstract: str) -> str:
    """A stable id for a source that has none: the prefix plus a content hash."""
    return f"{prefix}-{content_hash(abstract)[:12]}"
