"""Paper identifiers as people type them: arXiv ids and links, DOIs and doi.org links,
OpenReview links (what `paper`, `up` and library files name a paper by)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from digest.text.arxiv_ids import arxiv_ref


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
        pairs = (
            ("arxiv", self.arxiv),
            ("doi", self.doi),
            ("or", self.openreview),
            ("id", self.paper_id),
        )
        return tuple(f"{k}:{v}" for k, v in pairs if v)


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
