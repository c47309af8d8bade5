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
    """The followed author (as typed) for each row, or None: a whole-name match
    (``authors.people``), never a substring ("Yu Zhang" is not "Chenyu Zhang")."""
    from digest.rank.authors import people, rows_of

    wanted = [
        (n, rows_of(index.authors, frozenset(p.key for p in people(index.authors, n))))
        for n in names
        if n.strip()
    ]
    wanted = [(n, mine) for n, mine in wanted if mine]
    if not wanted:
        return [None] * len(rows)
    return [next((n for n, mine in wanted if r in mine), None) for r in rows.tolist()]


def author_scores(
    index: PaperIndex, rows: np.ndarray, names: list[str | None], other: np.ndarray
) -> np.ndarray:
    """The score of each row's followed author (``names``, from ``author_matches``; 0 for None):
    ``AUTHOR_BASE``, plus ``AUTHOR_LEAD`` when they lead it, plus ``AUTHOR_TOPIC`` x ``other``."""
    import numpy as np

    from digest.rank.authors import by, people

    keys = {n: frozenset(p.key for p in people(index.authors, n)) for n in set(filter(None, names))}
    out = np.zeros(len(rows), dtype=np.float32)
    for i, (r, name) in enumerate(zip(rows.tolist(), names, strict=True)):
        if name is None:
            continue
        authors = index.authors[r]
        lead = bool(authors) and by((authors[0], authors[-1]), keys[name])
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


# `similar` lists a paper only when it is closer than unrelated papers get. Measured by
# bench/similar_floor.py on 3,218 NeurIPS 2023 papers (pairs from the library tasks): two random
# papers score 0.05 / 0.18 / 0.31 in the LSA space (median / 95th / 99th percentile) and
# 0.28 / 0.47 / 0.56 with sentence embeddings, while a paper's nearest neighbour scores at least
# 0.42 (LSA) / 0.57 (embeddings) for 95% of papers. Each floor sits about at the 95th percentile
# of random pairs: below it a neighbour is no closer than one paper in twenty picked at random,
# and the typical paper's top neighbours stay well above it.
CLOSE_LSA = 0.2
CLOSE_DENSE = 0.45


def close_floor(index: PaperIndex) -> float:
    """The likeness below which a paper is not called close, in the space ``like_scores`` uses."""
    from digest.rank.index import paper_space

    return CLOSE_DENSE if paper_space(index) is index.dense else CLOSE_LSA


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


def closest_like(
    index: PaperIndex, rows: np.ndarray, likes: tuple[str, ...]
) -> list[tuple[str, np.ndarray]]:
    """Per liked paper in the index, the mask of ``rows`` it is the closest liked paper to (by
    ``paper_space``: sentence embeddings when every paper has one, else LSA); a pick of the
    liked papers' interest is credited to that one."""
    import numpy as np

    from digest.rank.index import paper_space

    known = [(pid, index.pos[pid]) for pid in dict.fromkeys(likes) if pid in index.pos]
    if not known:
        return []
    space = paper_space(index)
    sims = space[rows] @ space[[r for _, r in known]].T
    nearest = np.argmax(sims, axis=1)
    return [(pid, nearest == i) for i, (pid, _) in enumerate(known)]


#: Liked papers closer than this share of random pairs of papers in the corpus are parts of one
#: taste (their scores come from one model of them together); one percentile, in whatever
#: space ``paper_space`` gives (sentence embeddings or LSA), so no cosine is fixed per space.
RELATED_PERCENTILE = 80.0


def related_cosine(space: np.ndarray, pairs: int = 2000, seed: int = 0) -> float:
    """The cosine that ``RELATED_PERCENTILE`` of random pairs of papers (a fixed sample) fall
    under: two papers closer than that are related, here."""
    import numpy as np

    n = len(space)
    if n < 2:
        return 1.0
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, n, pairs), rng.integers(0, n, pairs)
    keep = a != b
    sims = (space[a[keep]] * space[b[keep]]).sum(axis=1)
    return float(np.percentile(sims, RELATED_PERCENTILE)) if len(sims) else 1.0


def like_parts(index: PaperIndex, likes: tuple[str, ...], related: float) -> list[tuple[str, ...]]:
    """The liked papers in the index split into tastes: papers linked by a chain of cosines of at
    least ``related`` (``paper_space``) are one part. Five papers on one field are one part (their
    centroid ranks their field best); a library of graph, interpretability and diffusion papers
    is three, each ranked on its own."""
    import numpy as np

    from digest.rank.index import paper_space

    known = [pid for pid in dict.fromkeys(likes) if pid in index.pos]
    if len(known) <= 1:
        return [tuple(known)] if known else []
    space = paper_space(index)
    v = space[[index.pos[pid] for pid in known]]
    linked = (v @ v.T) >= related
    part = list(range(len(known)))

    def root(i: int) -> int:
        while part[i] != i:
            part[i] = part[part[i]]
            i = part[i]
        return i

    for i, j in zip(*np.nonzero(linked), strict=True):
        part[root(int(i))] = root(int(j))
    out: dict[int, list[str]] = {}
    for i, pid in enumerate(known):
        out.setdefault(root(i), []).append(pid)
    return [tuple(v) for v in out.values()]


def votes_by_part(
    index: PaperIndex, parts: list[tuple[str, ...]], votes: tuple[tuple[str, int], ...]
) -> list[tuple[tuple[str, int], ...]]:
    """Each vote given to the taste (``like_parts``) whose liked papers are closest to the voted
    paper (``paper_space``), so a 👍 on a diffusion paper teaches the diffusion taste only."""
    import numpy as np

    from digest.rank.index import paper_space

    out: list[list[tuple[str, int]]] = [[] for _ in parts]
    known = [(pid, v) for pid, v in votes if pid in index.pos]
    if not parts or not known:
        return [tuple(v) for v in out]
    space = paper_space(index)
    for pid, v in known:
        vec = space[index.pos[pid]]
        near = [float((space[[index.pos[i] for i in part]] @ vec).max()) for part in parts]
        out[int(np.argmax(near))].append((pid, v))
    return [tuple(v) for v in out]


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
