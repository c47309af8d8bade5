"""The one ranking implementation behind search, digests, 'similar' and 'why'. No I/O."""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol

import numpy as np

from digest.rank import calibrate, feedback
from digest.rank import profile as prof
from digest.rank.authors import Person, people, rows_of
from digest.rank.diversity import fair_share
from digest.rank.index import PaperIndex
from digest.rank.results import NO_MATCH, Filters, Hit, Picks, SearchResult, page_order
from digest.rank.scorer import (
    MAX_QUERY_CHARS,
    Query,
    ScoreParams,
    TopicState,
    column_scores,
    compile_query,
    score,
    topic_state,
)
from digest.rank.semantic import SemanticParams
from digest.rank.weak import MatchCheck, check
from digest.rank.why import page_why, profile_why
from digest.rank.why import quote as _quote


class Encoder(Protocol):
    """Turns query texts into unit vectors (digest/index/embeddings.py's model, or a test's)."""

    def encode(self, texts: list[str]) -> np.ndarray: ...


__all__ = ["Filters", "Hit", "Picks", "Ranker", "SearchResult"]  # results are re-exported here

# A paper scoring at least this share of the threshold (but below it) is a near miss.
NEAR_MISS = 0.6
#: A topic refined by votes scores only its own candidates, the papers search would rank for it
#: (its best word matches, and those meaning brings when it has a share): votes re-rank them, they
#: do not pull in papers of other topics through the words they borrow (issue 34).
RERANK_WITHIN = True


def interest_groups(labels: list[str]) -> np.ndarray:
    """Per interest label, its share group in a digest, then a last -1 (for rows no interest
    scored): every `like:` paper is one group, each other interest its own."""
    ids: dict[str, int] = {}
    out = [ids.setdefault("like:" if lb.startswith("like:") else lb, len(ids)) for lb in labels]
    return np.array([*out, -1], dtype=np.int64)


def _fused(state: TopicState) -> bool:
    """True when meaning has a share of ``state``'s score."""
    return state.dense is not None and state.dense.weight > 0


class Ranker:
    """Scores papers of one fitted index for queries and channel profiles."""

    def __init__(
        self,
        index: PaperIndex,
        params: ScoreParams | None = None,
        encoder: Encoder | None = None,
        semantic: SemanticParams | None = None,
    ) -> None:
        self.index = index
        self.params = params or ScoreParams()
        # Meaning is used only when the papers were embedded and a query encoder is at hand.
        self.encoder = encoder if index.dense is not None else None
        self.semantic = semantic or SemanticParams()
        self._queries: OrderedDict[str, Query | None] = OrderedDict()
        self._states: OrderedDict[str, TopicState] = OrderedDict()
        self._refined: OrderedDict[tuple, TopicState | None] = OrderedDict()
        # per topic and votes, with the refined state it was computed for: see calibrate.py
        self._scales: dict[tuple, tuple[TopicState | None, float]] = {}
        self._topics: list | None = None
        self._blocked: dict[str, bool] = {}
        self._related: dict[str, float] = {}
        self._own: dict[str, tuple[TopicState, np.ndarray]] = {}

    def candidates(self, topic: str, base: TopicState) -> np.ndarray:
        """The rows search would rank for ``topic`` (cached with its state)."""
        key = topic.strip().lower()[:MAX_QUERY_CHARS]
        cached = self._own.get(key)
        if cached is None or cached[0] is not base:
            cached = self._own[key] = (base, score(self.index, base, None, self.params)[0])
            if len(self._own) > 256:
                self._own.pop(next(iter(self._own)))
        return cached[1]

    def related(self) -> float:
        """``profile.related_cosine`` of the space likeness is read in (computed once each)."""
        from digest.rank.index import paper_space

        space = paper_space(self.index)
        key = "dense" if space is self.index.dense else "latent"
        if key not in self._related:
            self._related[key] = prof.related_cosine(space)
        return self._related[key]

    def carry_from(self, earlier: Ranker) -> None:
        """Keep what depends on the fit alone from the ranker of an earlier state of the same fit.

        Appended segments and newly attached embeddings leave the fit (its basis) as it was, but
        each makes a new index and so a new ranker: mining the suggested topics again for each
        put an NMF fit inside the first weak search after every refresh during an ingest (two
        thirds of a bot's CPU under load). They are mined again after the next fit.
        """
        if self._topics is None and earlier.index.basis is self.index.basis:
            self._topics = earlier._topics

    def suggested_topics(self, k: int = 8) -> list:
        """Topics mined from the corpus (computed once per fit: see ``carry_from``)."""
        if self._topics is None:
            from digest.rank.topics import suggest

            self._topics = suggest(self.index, k)
        return self._topics

    def compile(self, text: str) -> Query | None:
        """A compiled topic, cached (10,000 channels share far fewer topics)."""
        key = text.strip().lower()[:MAX_QUERY_CHARS]
        if key not in self._queries:
            self._queries[key] = compile_query(self.index, key, self.params)
            if len(self._queries) > 4096:
                self._queries.popitem(last=False)
        return self._queries[key]

    def state(self, text: str) -> TopicState | None:
        """A topic's reusable scoring state (LRU-cached; ~4 bytes per paper each)."""
        key = text.strip().lower()[:MAX_QUERY_CHARS]
        if key in self._states:
            self._states.move_to_end(key)
            return self._states[key]
        q = self.compile(text)
        if q is None:
            return None
        qvec = self.encoder.encode([key])[0] if self.encoder is not None else None
        self._states[key] = topic_state(self.index, q, self.params, qvec, self.semantic)
        if len(self._states) > 256:
            self._states.popitem(last=False)
        return self._states[key]

    def specific_matches(self, text: str) -> int | None:
        """How many papers hold one of ``text``'s specific words (or their family); None when
        all its words are generic ('learning', 'neural networks'): those alone match nothing."""
        q = self.compile(text)
        if q is None:
            return 0
        # Typed words and their families only: 'nn', brought in for 'neural networks', is not
        # what the user typed, and counting its papers made a generic topic look specific.
        typed, names = q.cache.get("typed", frozenset()), q.cache.get("names", ())
        keep = [
            i
            for i, name in enumerate(names)
            if name in typed and (q.generic is None or not q.generic[i])
        ]
        if not keep:
            return None
        cols = q.cols[keep]
        has, _ = column_scores(self.index.weights, cols, np.ones(len(cols), dtype=np.float32))
        return int((has > 0).sum())

    def sendable(self, text: str, threshold: float) -> int:
        """How many stored papers ``text`` alone would score at or above ``threshold`` on the
        shown (calibrated) scale: what a digest could send for it, not every paper holding one
        of its words."""
        if self.blocked(text):
            return 0
        return int((self.shown_scores(text) >= threshold).sum())

    def shown_scores(self, text: str) -> np.ndarray:
        """Every stored paper's score for the topic ``text`` as a digest shows it (its curve)."""
        st = self.state(text)
        if st is None:
            return np.zeros(0, dtype=np.float32)
        raw = score(self.index, st, np.arange(len(self.index)), self.params)[1]
        fused = st.dense is not None and st.dense.weight > 0
        return calibrate.relevance(
            np.minimum(raw, 1.0), st.query.words, fused, st.coverage, calibrate.lists(text)
        )

    def blocked(self, text: str) -> bool:
        """True when ``text``'s words that papers use are all generic (``MatchCheck.blocked``)."""
        key = text.strip().lower()[:MAX_QUERY_CHARS]
        if key not in self._blocked:
            if len(self._blocked) >= 4096:  # bounded like the query cache
                self._blocked.clear()
            self._blocked[key] = check(self.index, key, suggest=False).blocked
        return self._blocked[key]

    def people(self, name: str) -> list[Person]:
        """The stored authors ``name`` means (several: the name is ambiguous), most papers first."""
        return people(self.index.authors, name)

    def _filter_rows(self, f: Filters) -> np.ndarray | None:
        if not (f.venue or f.year or f.author):
            return None
        ix = self.index
        mask = np.ones(len(ix), dtype=bool)
        if f.year:
            mask &= ix.years == f.year
        if f.venue:
            v = f.venue.lower()
            mask &= np.array([v in venue for venue in ix.venues])
        if f.author:  # a whole name (``authors.people``), never a substring of another
            keys = frozenset(p.key for p in self.people(f.author))
            mine = np.zeros(len(ix), dtype=bool)
            mine[list(rows_of(ix.authors, keys))] = True
            mask &= mine
        return np.flatnonzero(mask)

    def search(
        self,
        text: str,
        filters: Filters | None = None,
        page: int = 1,
        per_page: int = 10,
        min_score: float = 0.1,
        explain: bool = True,
    ) -> SearchResult:
        """Free-text search over all papers, best first, paginated (``explain``: why-lines)."""
        filters = filters or Filters()
        page, per_page = max(1, page), max(1, min(per_page, 100))
        if not text.strip():
            return SearchResult(
                text, (), 0, page, per_page, "Type a topic or a few words to search for."
            )
        weak = check(self.index, text)
        if weak.blocked:  # 'diffusion models' where no paper says 'diffusion': 'models' is no match
            return SearchResult(text, (), 0, page, per_page, self._weak_note(weak))
        st = self.state(text)
        if st is None:
            return SearchResult(text, (), 0, page, per_page, f"No papers match {_quote(text)} yet.")
        rows = self._filter_rows(filters)
        if rows is not None and not len(rows):
            return SearchResult(text, (), 0, page, per_page, "No papers match those filters.")
        rows, scores = score(self.index, st, rows, self.params)
        keep = scores >= min_score
        rows, scores = rows[keep], scores[keep]
        if not len(rows):
            return SearchResult(text, (), 0, page, per_page, f"No papers match {_quote(text)} yet.")
        order = page_order(scores, page, per_page)
        ids, page_scores = self.index.ids, [round(float(scores[i]), 4) for i in order]
        if not explain:  # ranking alone (the benchmark's ranking-only column)
            hits = tuple(Hit(ids[rows[i]], page_scores[k], "") for k, i in enumerate(order))
            return SearchResult(text, hits, len(rows), page, per_page, self._weak_note(weak))
        # One pass for the whole page: term shares, matched words and title phrases.
        whys = page_why(self.index, text, st, rows[order], [float(scores[i]) for i in order])
        hits = tuple(Hit(ids[rows[i]], page_scores[k], whys[k]) for k, i in enumerate(order))
        return SearchResult(text, hits, len(rows), page, per_page, self._weak_note(weak))

    def _weak_note(self, weak: MatchCheck) -> str:
        """Which words no paper uses, with close spellings or else the corpus's own topics."""
        if not weak.missing:
            return ""
        topics = [] if weak.suggestions else [t.label for t in self.suggested_topics()]
        return weak.message(topics)

    def similar(self, paper_id: str, k: int = 5) -> list[Hit]:
        """Papers closest to ``paper_id`` in the latent space, none below ``close_floor`` (an
        empty list: nothing stored is close to it)."""
        pos = self.index.pos.get(paper_id)
        if pos is None:
            return []
        sims = prof.like_scores(self.index, np.arange(len(self.index)), paper_id)
        top = np.argsort(-sims, kind="stable")[:k]
        title = self.index.titles[pos]
        floor = prof.close_floor(self.index)
        return [
            Hit(self.index.ids[r], round(float(sims[r]), 4), f"similar to {_quote(title, 50)}")
            for r in top
            if sims[r] > 0 and sims[r] >= floor
        ]

    def refined(self, topic: str | None, votes: tuple[tuple[str, int], ...]) -> TopicState | None:
        """A topic refined by a channel's votes (or the votes alone), cached per topic and votes."""
        key = ((topic or "").strip().lower(), tuple(sorted(votes)))
        if key not in self._refined:
            base = self.state(topic) if topic else None
            pos, neg = prof.vote_rows(self.index, votes)
            self._refined[key] = feedback.learn(self.index, base, pos, neg, self.params)
            if len(self._refined) > 256:
                self._scales.pop(self._refined.popitem(last=False)[0], None)
        return self._refined[key]

    def refined_scale(self, topic: str, votes: tuple[tuple[str, int], ...]) -> float:
        """The factor keeping ``topic`` refined by ``votes`` on the threshold's scale."""
        key = (topic.strip().lower(), tuple(sorted(votes)))
        state = self.refined(topic, votes)
        cached = self._scales.get(key)
        if cached is None or cached[0] is not state:  # a state learned anew gets a new factor
            pos, neg = prof.vote_rows(self.index, votes)
            factor = calibrate.scale(self.index, self.state(topic), state, pos + neg, self.params)
            cached = self._scales[key] = (state, factor)
        return cached[1]

    def score_profile(
        self, p: prof.Profile, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
        """Per candidate row: best interest score (the order), best on the threshold's scale,
        which interest gave the order's score (index into labels); and the labels."""
        best = np.zeros(len(rows), dtype=np.float32)
        level = np.zeros(len(rows), dtype=np.float32)
        source = np.full(len(rows), -1, dtype=np.int32)
        labels: list[str] = []

        def take(
            scores: np.ndarray,
            label: str,
            factor: float = 1.0,
            words: int = 0,
            fused: bool = False,
            shown: np.ndarray | None = None,
            coverage: float | None = None,
            listing: bool = False,
        ) -> None:
            better = scores > best
            best[better] = scores[better]
            source[better] = len(labels)
            labels.append(label)
            if shown is None:
                shown = np.minimum(scores * factor, 1.0)  # on the plain topic's scale
                if words > 0:  # a topic's score as how often such papers were relevant
                    shown = calibrate.relevance(shown, words, fused, coverage, listing)
            np.maximum(level, shown, out=level)

        for topic in p.topics:
            if self.blocked(topic):  # its specific words are in no paper: nothing matches it yet
                continue
            base = self.state(topic)
            st = self.refined(topic, p.votes) if p.votes else base
            if st is None:
                continue
            factor = self.refined_scale(topic, p.votes) if p.votes else 1.0
            words = base.query.words if base is not None else 0  # 0: votes alone, as is
            fused = st.dense is not None and st.dense.weight > 0  # meaning in the score
            scores = score(self.index, st, rows, self.params)[1]
            if st is not base and base is not None and RERANK_WITHIN:
                # Votes re-rank the topic's own candidates (its word matches, and the papers
                # meaning brings when it has a share); they do not bring in other topics'.
                own = self.candidates(topic, base)
                scores = np.where(np.isin(rows, own), scores, 0.0).astype(np.float32)
            cover = base.coverage if base is not None else None  # the curve's band
            listing = calibrate.lists(topic)  # 'causal inference and discovery': a field
            take(scores, f"topic:{topic}", factor, words, fused, coverage=cover, listing=listing)
        if p.votes and not p.topics and not p.likes:  # taste from votes alone: the likes' curve
            st = self.refined(None, p.votes)
            if st is not None:
                scores = score(self.index, st, rows, self.params)[1]
                shown = calibrate.read(np.minimum(scores, 1.0), calibrate.LIKE, fused=_fused(st))
                take(scores, "votes:", shown=shown)
        # The liked papers: one interest, split into tastes (``like_parts``); each taste scored
        # by the vote learner on its papers (and the votes closest to them) together, each pick
        # credited to the closest of its liked papers.
        liked = [self.index.pos[i] for i in p.likes if i in self.index.pos]
        parts = prof.like_parts(self.index, p.likes, self.related()) if p.likes else []
        for part, votes in zip(parts, prof.votes_by_part(self.index, parts, p.votes), strict=True):
            st = self.refined(None, tuple((pid, 1) for pid in part) + votes)
            if st is None:
                continue
            scores = score(self.index, st, rows, self.params)[1]
            scores[np.isin(rows, liked)] = 0.0  # a liked paper itself is not news
            # fused with meaning (embeddings stored): fused scores sit higher, their own curve
            shown = calibrate.read(np.minimum(scores, 1.0), calibrate.LIKE, fused=_fused(st))
            for pid, mask in prof.closest_like(self.index, rows, part):
                take(np.where(mask, scores, 0.0), f"like:{pid}", shown=np.where(mask, shown, 0))
        if p.authors:
            names = prof.author_matches(self.index, rows, p.authors)
            scores = prof.author_scores(self.index, rows, names, level.copy())
            for name in sorted(set(filter(None, names))):
                take(np.where([n == name for n in names], scores, 0.0), f"author:{name}")
        return best, level, source, labels

    def rank(
        self,
        p: prof.Profile,
        candidate_ids: list[str],
        size: int = 5,
        threshold: float = 0.3,
        diversity: float = 0.3,
    ) -> Picks:
        """The best ``size`` candidates above ``threshold``, diversified (MMR), each with a why."""
        pos = self.index.pos
        rows = np.fromiter((pos.get(i, -1) for i in candidate_ids), np.int64, len(candidate_ids))
        rows = rows[rows >= 0]
        if not len(rows) or p.is_empty():
            return Picks((), considered=len(rows))
        final, level, source, labels = self.score_profile(p, rows)
        excluded = prof.excluded_rows(self.index, rows, p.excludes) if p.excludes else None
        if excluded is not None:
            final = np.where(excluded, -1.0, final)
            level = np.where(excluded, -1.0, level)
        # The threshold and the scores shown are on the calibrated scale; the order is the learner's.
        eligible = np.flatnonzero(level >= threshold)
        # Each interest gets its share of the places; shown best first (the backlog too). The
        # liked papers are one interest (each pick names the closest of them): 20 imported
        # papers take one turn, as one typed topic does.
        groups = interest_groups(labels)[source]  # source -1 reads the trailing -1
        chosen = fair_share(
            self.index.latent, rows, final, eligible, groups, size, diversity, sub=source
        )
        chosen.sort(key=lambda i: (-float(level[i]), -float(final[i])))
        near = int(((level >= NEAR_MISS * threshold) & (level < threshold)).sum())
        used: set[str] = set()  # picks of one list are told apart by different words
        hits = tuple(
            Hit(
                self.index.ids[rows[i]],
                round(float(level[i]), 4),
                self._why(
                    p, rows[i], labels[source[i]] if source[i] >= 0 else "", float(final[i]), used
                )
                if round(float(level[i]), 2) > 0  # shown as 0.00: no interest matches it
                else NO_MATCH,
            )
            for i in chosen
        )
        return Picks(
            hits,
            more=len(eligible) - len(chosen),
            near_misses=near,
            excluded=int(excluded.sum()) if excluded is not None else 0,
            considered=len(rows),
        )

    def _why(
        self, p: prof.Profile, row: int, source: str, fused: float, used: set[str] | None = None
    ) -> str:
        """Deterministic reason: the interest that matched, its terms, and the closest 👍 paper."""
        kind, _, label = source.partition(":")
        st = self.state(label) if kind == "topic" else None
        liked, _ = prof.vote_rows(self.index, p.votes)
        return profile_why(self.index, source, st, int(row), fused, liked, used)
