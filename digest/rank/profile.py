"""A channel's interest profile scored over candidate papers: topics, authors, likes, excludes, votes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from digest.models import Subscription, SubscriptionKind

# NumPy, the index (SciPy) and the analyzer (the stemmer, its word lists) load with ranking, not
# with every profile read: `list` and `channels` build a Profile to say whether a channel follows
# anything.
if TYPE_CHECKING:
    import numpy as np

    from digest.rank.index import PaperIndex

# A followed author's paper is worth posting: it scores at least AUTHOR_BASE, more as the author
# leads it (first or last), and more as it matches the channel's other interests, so the
# author's papers are ordered (and share a digest) by what else the channel wants.
AUTHOR_BASE = 0.5
AUTHOR_LEAD = 0.1  # first or last author
AUTHOR_TOPIC = 0.4  # times the paper's best score for the channel's other interests


@dataclass(frozen=True)
class Profile:
    """Everything a channel said it wants (and does not want)."""

    topics: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    likes: tuple[str, ...] = ()
    votes: tuple[tuple[str, int], ...] = ()  # (paper id, net vote)

    def is_empty(self) -> bool:
        """True when there is nothing to rank by."""
        return not (self.topics or self.authors or self.likes or any(v > 0 for _, v in self.votes))


def author_matches(index: PaperIndex, rows: np.ndarray, names: tuple[str, ...]) -> list[str | None]:
    """The followed author (as typed) for each row, or None."""
    wanted = [(n, n.lower().strip()) for n in names if n.strip()]
    if not wanted:
        return [None] * len(rows)
    out: list[str | None] = []
    for r in rows:
        authors = index.authors[r]
        hit = next((n for n, low in wanted if any(low in a for a in authors)), None)
        out.append(hit)
    return out


def author_scores(
    index: PaperIndex, rows: np.ndarray, names: list[str | None], other: np.ndarray
) -> np.ndarray:
    """The score of each row's followed author (``names``, from ``author_matches``; 0 for None):
    ``AUTHOR_BASE``, plus ``AUTHOR_LEAD`` when they lead it, plus ``AUTHOR_TOPIC`` x ``other``."""
    import numpy as np

    out = np.zeros(len(rows), dtype=np.float32)
    for i, (r, name) in enumerate(zip(rows.tolist(), names, strict=True)):
        if name is None:
            continue
        authors = index.authors[r]
        low = name.lower().strip()
        lead = bool(authors) and (low in authors[0] or low in authors[-1])
        extra = AUTHOR_LEAD * lead + AUTHOR_TOPIC * min(max(float(other[i]), 0.0), 1.0)
        out[i] = AUTHOR_BASE + extra
    return out


def excluded_rows(index: PaperIndex, rows: np.ndarray, terms: tuple[str, ...]) -> np.ndarray:
    """True for rows whose title/abstract contain any exclude term (as a phrase when multi-word)."""
    import numpy as np

    from digest.rank.analyzer import phrase_terms

    mask = np.zeros(len(rows), dtype=bool)
    w = index.weights
    for term in terms:
        parts = phrase_terms(term)
        phrases = [t for t in parts if " " in t] or parts
        cols = [index.vocab.get(t) for t in phrases]
        if not phrases or None in cols:
            continue  # a word the corpus never uses excludes nothing
        present = np.ones(len(rows), dtype=bool)
        for c in cols:  # every phrase of the term must occur
            present &= np.isin(rows, w.indices[w.indptr[c] : w.indptr[c + 1]])
        mask |= present
    return mask


def like_scores(index: PaperIndex, rows: np.ndarray, paper_id: str) -> np.ndarray:
    """Latent similarity of each row to a liked paper ('papers like this one')."""
    import numpy as np

    pos = index.pos.get(paper_id)
    if pos is None:
        return np.zeros(len(rows), dtype=np.float32)
    from digest.rank.index import paper_space

    space = paper_space(index)  # sentence embeddings when present: closer to what a reader means
    sims = np.clip(space[rows] @ space[pos], 0.0, 1.0)
    sims[rows == pos] = 0.0  # the liked paper itself is not news
    return sims


def vote_rows(index: PaperIndex, votes: tuple[tuple[str, int], ...]) -> tuple[list[int], list[int]]:
    """Rows of 👍 and 👎 papers that are in the index."""
    pos = [index.pos[p] for p, v in votes if v > 0 and p in index.pos]
    neg = [index.pos[p] for p, v in votes if v < 0 and p in index.pos]
    return pos, neg


def profile_of(subs: Iterable[Subscription], totals: Mapping[str, int]) -> Profile:
    """A channel's profile from its subscriptions and net votes."""
    by = {k: tuple(s.text for s in subs if s.kind == k) for k in SubscriptionKind}
    return Profile(
        topics=by[SubscriptionKind.TOPIC],
        authors=by[SubscriptionKind.AUTHOR],
        excludes=by[SubscriptionKind.EXCLUDE],
        likes=by[SubscriptionKind.LIKE],
        votes=tuple((pid, 1 if v > 0 else -1) for pid, v in totals.items() if v),
    )
