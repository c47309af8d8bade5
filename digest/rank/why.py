"""Why-lines: the words a paper shares with a topic, what sets it apart, and when meaning or a 👍 brought it."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from digest.rank.analyzer import term_of, terms_of
from digest.rank.index import PaperIndex
from digest.rank.scorer import Query, TopicState, contributions, matched_many
from digest.text.headline import shorten

MEANING = 0.3  # below this lexical share of the fused score, meaning rather than words brought it
LIKED = 0.5  # similarity above which a pick is said to be like a 👍 paper
TITLE_CHARS = 60  # a named title stays short: the why-line is one line on every platform


#: Quote marks a user may type around (or at one edge of) a query: ours would double them.
_EDGE_QUOTES = "'\"‘’“”`"

#: The why of a pick no interest scores above 0.00 as shown: a "matches …" or "like …" line
#: beside a 0.00 would contradict it (a card, `why` and the backlog say this alike).


def quote(text: str, limit: int = 60) -> str:
    """'text', shortened with an ellipsis past ``limit`` characters; quote marks typed at its
    edges are dropped (`'OR 1=1` reads 'OR 1=1', not ''OR 1=1')."""
    text = " ".join(text.split())
    text = text.strip(_EDGE_QUOTES).strip() or text  # a query of only quotes stays as typed
    return f"'{text[:limit]}…'" if len(text) > limit else f"'{text}'"


@lru_cache(maxsize=4096)
def _span(text: str, phrase: str, gap: int = 2) -> str | None:
    """``phrase`` ('learning human') as written in ``text``, stop words included, if it is there."""
    a, _, b = phrase.partition(" ")
    pat = rf"\b{re.escape(a)}\w*(?:\W+\w+){{0,{gap}}}?\W+{re.escape(b)}\w*"
    m = re.search(pat, text.lower())
    return m.group(0) if m else None


def _readable(index: PaperIndex, q: Query, term: str) -> str:
    """A matched term in words: the user's own phrase where they typed one, else the corpus's form."""
    if " " in term:
        span = _span(q.text, " ".join(q.shown.get(s, s) for s in term.split()))
        if span:
            return span
        return " ".join(_word(index, q, t) for t in term.split())
    return _word(index, q, term)


def _word(index: PaperIndex, q: Query, term: str) -> str:
    """One index term as a word people write: as typed, else as titles write it; never a stem
    ('physic') or a compound glued together ('outofdistribution')."""
    if (typed := q.shown.get(term)) is not None:
        return typed
    for compound in re.findall(r"[^\W_]+(?:-[^\W_]+)+", q.text.lower()):
        if compound.replace("-", "") == term:
            return compound  # 'out-of-distribution', as typed
    words = re.findall(r"[^\W_]+", q.text.lower())
    for n in (2, 3, 4):  # typed apart ('out of distribution'): hyphenated, as papers write it
        for i in range(len(words) - n + 1):
            if "".join(words[i : i + n]) == term:
                return "-".join(words[i : i + n])
    return index.surface.get(term, term)


def _renderer(index: PaperIndex, q: Query) -> Callable[[str], str]:
    """``_readable`` for one query, remembering each term's words (a page repeats its terms)."""
    memo: dict[str, str] = {}

    def render(term: str) -> str:
        if (shown := memo.get(term)) is None:
            shown = memo[term] = _readable(index, q, term)
        return shown

    return render


_WORD = re.compile(r"[^\W_]+")


def distinct(index: PaperIndex, row: int, skip: set[str]) -> str | None:
    """The title's most specific phrase (or word) beyond the topic's: what sets this paper apart."""
    return title_phrases(index, [row], skip)[0]


def title_phrases(index: PaperIndex, rows: list[int], skip: set[str]) -> list[str | None]:
    """``distinct`` of each row: the words of all the titles are looked up in one pass."""
    spans, words = [], []
    for row in rows:
        title = index.titles[row]
        if title.isascii():  # lower-casing first splits ASCII text the same way, in one call
            found = _WORD.findall(title.lower())
        else:
            found = [w.lower() for w in _WORD.findall(title)]
        spans.append((len(words), len(words) + len(found)))
        words += found
    terms = [t if t not in skip else "" for t in terms_of(words)]
    get = index.vocab.get
    # Pairs across title ends are looked up too (one pass); _best reads those inside a title.
    pairs = [get(f"{a} {b}") if a and b else None for a, b in zip(terms, terms[1:], strict=False)]
    cols = (list(map(get, terms)), pairs)
    return [_best(index.idf, words, terms, cols, a, b) for a, b in spans]


def _best(
    idf: np.ndarray,
    words: list[str],
    terms: list[str],
    cols: tuple[list[int | None], list[int | None]],
    a: int,
    b: int,
) -> str | None:
    """The title ``words[a:b]``'s highest-idf phrase whose terms are all kept: two adjacent
    title words, or its best word with the kept word beside it; None when no two kept words
    stand together (a lone word, "on till", reads as a fragment, not as what the paper is on)."""
    best, best_idf, at = None, 0.0, -1
    # Words first, then phrases, each in title order: the first of the highest idf wins.
    for i in range(a, b):
        if (c := cols[0][i]) is not None and terms[i] and (v := float(idf[c])) > best_idf:
            best, best_idf, at = words[i], v, i
    # A phrase must stand in the title as two adjacent words; a phrase says more (x1.3).
    for i in range(a, b - 1):
        if (c := cols[1][i]) is None or not (terms[i] and terms[i + 1]):
            continue
        if (v := float(idf[c]) * 1.3) > best_idf:
            best, best_idf, at = f"{words[i]} {words[i + 1]}", v, -1
    if at < 0:
        return best
    # A single word: extended by the kept word beside it (the more specific of the two sides),
    # so the tail names a phrase of the title; dropped when both neighbours are topic or
    # stop words.
    sides = [j for j in (at - 1, at + 1) if a <= j < b and terms[j]]
    if not sides:
        return None
    j = max(sides, key=lambda k: float(idf[c]) if (c := cols[0][k]) is not None else 0.0)
    return f"{words[j]} {words[at]}" if j < at else f"{words[at]} {words[j]}"


def by_meaning(state: TopicState, row: int, fused: float) -> bool:
    """True when meaning rather than words brought paper ``row`` for this topic."""
    if state.dense is None or not state.dense.weight > 0:  # words alone: no need to look
        return False
    return float(state.lex[row]) / max(fused, 1e-9) < MEANING


def topic_why(index: PaperIndex, topic: str, state: TopicState, row: int, fused: float) -> str:
    """'matches 'topic': words; also: title phrase', or 'close in meaning to 'topic'' when it was."""
    return page_why(index, topic, state, np.array([row]), [fused])[0]


def page_why(
    index: PaperIndex, topic: str, state: TopicState, rows: np.ndarray, fused: list[float]
) -> list[str]:
    """``topic_why`` of each of ``rows`` (a search page), their shares and titles read at once."""
    q = state.query
    if "skip" not in q.cache:  # once per query rather than per hit
        q.cache["skip"] = {s for t in q.terms for s in t.split()}  # the topic's own words
        q.cache["render"] = _renderer(index, q)
    meaning = [by_meaning(state, r, f) for r, f in zip(rows.tolist(), fused, strict=True)]
    if any(meaning):
        rows = rows[~np.array(meaning, dtype=bool)]
    shares = contributions(index, q, rows)
    terms = matched_many(index, q, shares, q.cache["render"])
    g = q.generic
    if g is not None and g.any() and not g.all() and len(rows):
        # Only generic words ('model') in common with a query that has specific ones: no match
        # on those words is claimed (the paper is there by its wording as a whole, LSA).
        alone = (shares[:, ~g] <= 0).all(axis=1).tolist()
        terms = [[] if a else t for a, t in zip(alone, terms, strict=True)]
    extras = title_phrases(index, rows.tolist(), q.cache["skip"])
    base = f"matches {quote(topic, 40)}"
    lexical = iter(
        f"{base}: {', '.join(t)}{tail}" if t else f"{base} (related wording){tail}"
        for t, tail in zip(terms, (f"; on {e}" if e else "" for e in extras), strict=True)
    )  # the title's own phrase ('; on ...') tells picks apart
    close = f"close in meaning to {quote(topic, 40)}"
    return [close if m else next(lexical) for m in meaning]


def title_ref(title: str, limit: int = TITLE_CHARS) -> str:
    """``*Title*`` on one line, cut on a word boundary; '*' inside is dropped so the markers pair."""
    # shorten() may add an ellipsis past its limit: one character is kept for it.
    return f"*{shorten(' '.join(title.replace('*', ' ').split()), limit - 1)}*"


def nearest_liked(index: PaperIndex, row: int, liked: list[int]) -> tuple[int, float] | None:
    """The 👍 row most like ``row`` and its cosine: by embeddings when all have one, else LSA."""
    rows = np.array([r for r in liked if r != row], dtype=np.int64)
    if not len(rows):
        return None
    has = index.has_dense
    dense = index.dense is not None and has is not None and bool(has[row] and has[rows].all())
    space = index.dense if dense else index.latent  # one space: cosines of two are not comparable
    sims = space[rows] @ space[row]
    best = int(np.argmax(sims))
    return int(rows[best]), float(sims[best])


def liked_why(
    index: PaperIndex,
    row: int,
    liked: list[int],
    lead: bool,
    floor: float = LIKED,
    used: set[str] | None = None,
) -> str | None:
    """'like *Title*, which you liked' for the closest 👍 paper (None when it is under ``floor``).

    When the 👍 paper is the reason (``lead``), the paper's own most specific title phrase
    beyond the liked title's words follows, so picks brought by one 👍 read differently.
    """
    near = nearest_liked(index, row, liked)
    if near is None or near[1] < floor:
        return None
    title = index.titles[near[0]]
    line = f"like {title_ref(title)}, which you liked"
    if not lead:
        return line
    skip = {t for w in re.findall(r"[^\W_]+", title.lower()) if (t := term_of(w))}
    # Words an earlier pick of the same list was told apart by are skipped: its own words then.
    extra = distinct(index, row, skip | used) if used else None
    extra = extra or distinct(index, row, skip)  # nothing new in its title: its best phrase
    if extra and used is not None:
        used.update(t for w in extra.split() if (t := term_of(w)))
    return f"{line}; on {extra}" if extra else line


def profile_why(
    index: PaperIndex,
    source: str,
    state: TopicState | None,
    row: int,
    fused: float,
    liked: list[int],
    used: set[str] | None = None,
) -> str:
    """A digest pick's reason: its interest (topic, author, like) and the closest 👍 paper
    (``used``: the words earlier picks of the list were told apart by, updated)."""
    kind, _, label = source.partition(":")
    head = None
    if state is not None:
        words = float(state.lex[row]) > 0
        if words or by_meaning(state, row, fused) or not liked:
            head = topic_why(index, label, state, row, fused)
    elif kind == "author":
        head = f"by {label}, whom you follow"
    elif kind == "like":
        pos = index.pos.get(label)
        head = f"like {title_ref(index.titles[pos] if pos is not None else label)}"
        liked = [r for r in liked if r != pos]  # named once: not again as 'which you liked'
    # Neither words nor meaning brought it (or votes alone did): the 👍 papers lead the line;
    # a topic pick names one only if it is somewhat alike (else: the topic's related wording).
    floor = -1.0 if kind == "votes" else LIKED if head is not None else LIKED / 2
    like = liked_why(index, row, liked, lead=head is None, floor=floor, used=used)
    if head is None and like is None and state is not None:
        head = topic_why(index, label, state, row, fused)
    return "; ".join(p for p in (head, like) if p) or "related to your interests"


_INTERESTS = (
    (re.compile(r"^(?:matches|close in meaning to) '(.+?)'(?=:|;| \(|$)"), "{}"),
    (re.compile(r"^by (.+?), whom you follow"), "{}"),
    (re.compile(r"^(?:like \*.+?\*, which you liked|resembles 👍)"), "your 👍 papers"),
    (re.compile(r"^like \*(.+?)\*"), "papers like {}"),
)


def interest_of(why: str) -> str:
    """The interest a stored why-line credits (a topic, an author, your 👍 papers, …) for stats."""
    for pattern, label in _INTERESTS:
        if m := pattern.match(why):
            return label.format(*m.groups())
    return why.split(";")[0]
