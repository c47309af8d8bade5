"""What ranking returns: hits with reasons, search pages and channel picks. No I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the chat side imports Filters for every command; NumPy loads with ranking
    import numpy as np


#: What a card, `why` and a digest's footer say of a paper nothing of the channel matches (one
#: spelling; here, so that listings can say it without loading the ranker).
NO_MATCH = "Nothing in it matches this channel's interests."


@dataclass(frozen=True)
class Hit:
    """A ranked paper with its score and a short deterministic reason."""

    paper_id: str
    score: float
    why: str


@dataclass(frozen=True)
class Filters:
    """Search restrictions (case-insensitive substring for venue and author)."""

    venue: str | None = None
    year: int | None = None
    author: str | None = None


@dataclass(frozen=True)
class SearchResult:
    """One page of search hits, or a message saying why there are none."""

    query: str
    hits: tuple[Hit, ...]
    total: int
    page: int
    per_page: int
    message: str = ""

    @property
    def pages(self) -> int:
        """How many pages the whole result has."""
        return max(1, -(-self.total // self.per_page))


@dataclass(frozen=True)
class Picks:
    """A channel's ranked picks among candidates, and what did not make it."""

    hits: tuple[Hit, ...]
    more: int = 0  # above the threshold but beyond the digest size
    near_misses: int = 0  # just below the threshold
    excluded: int = 0
    considered: int = 0


def page_order(scores: np.ndarray, page: int, per_page: int) -> np.ndarray:
    """Positions of one page of ``scores``, best first, ties in position order (a stable sort).

    Only the papers at least as good as the page's last one are sorted: a search sorts a page
    of ten, not its thousand candidates.
    """
    import numpy as np

    need = page * per_page
    if len(scores) > 4 * need:
        cut = np.partition(-scores, need - 1)[need - 1]
        rows = np.flatnonzero(-scores <= cut)  # ties with the cut-off included: order stays exact
        return rows[np.argsort(-scores[rows], kind="stable")][need - per_page : need]
    return np.argsort(-scores, kind="stable")[need - per_page : need]
