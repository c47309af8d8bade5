"""Why-lines on the development set: do they name words the paper has, and do they tell papers apart?

Search: for the top 10 of every query of both files, the share of named words (after
'matches …:') that occur in the paper's title or abstract as written, or as the singular of a
word written there; and the share of hits whose why-line is identical to another hit's in the
same list. Feedback: each query is a channel (through ChannelService, as bench.feedback does);
its day-1 digest of 20 gets 👍 (relevant) / 👎, then its day-2 digest of 10 is composed, with
the topic and the votes, and with the votes alone. For those why-lines: how many name a liked
paper ("like *Title*, which you liked"), whether the named paper is closer to the pick than the
channel's other 👍 papers by author keywords (mean keyword Jaccard, named vs. all 👍), named
words that occur in the pick, and repeated lines:
    python -m bench.why
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import numpy as np

from bench.common import EVAL_DIR, load_eval, load_query_files, machine, paired_bootstrap, table
from bench.quality import fmt_ci
from digest.delivery.digests import Digests
from digest.models import ChannelRef, SubscriptionKind
from digest.rank.index import build_index
from digest.rank.ranker import Ranker

WORD = re.compile(r"[^\W_]+")
LIKED = re.compile(r"like \*([^*]+)\*, which you liked")


QUOTE = re.compile(r"^(?:matches|close in meaning to) '.*?'(?=:|;| \(|$)( \(related wording\))?")


def named_words(why: str) -> list[str]:
    """Words the why-line names as matched or distinctive (the topic quote itself is skipped)."""
    rest = QUOTE.sub("", why)
    return WORD.findall(rest.replace("; on ", ", ").lower())


def own_words(why: str) -> list[str]:
    """Words a feedback why-line says of the pick itself: matched words and the '; on' phrase."""
    return named_words(LIKED.sub("", why))


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def search_rows(docs, text) -> list[list]:
    """The search table: named words that occur, and repeated why-lines, per query file."""
    ranker = Ranker(build_index(docs))
    rows = []
    for name, queries in load_query_files().items():
        words = found = plural_only = hits = same = 0
        for q in queries:
            result = ranker.search(q["query"], per_page=10)
            whys = [h.why for h in result.hits]
            hits += len(whys)
            same += sum(whys.count(w) > 1 for w in whys)
            for h in result.hits:
                for w in named_words(h.why):
                    words += 1
                    found += w in text[h.paper_id]
                    plural_only += w not in text[h.paper_id] and f"{w}s" in text[h.paper_id]
        rows.append([name, words, found / words, (found + plural_only) / words, same / hits])
    return rows


def day2(svc, n: int, q: dict, votes_only: bool):
    """A channel's day-2 digest items after voting on its day-1 digest, and its 👍 ids."""
    from bench.feedback import DAY1, DAY2

    ref = ChannelRef("why", f"c{n}")
    svc.follows.add(ref, SubscriptionKind.TOPIC, q["query"])
    svc.settings.set_size(ref, "20")
    svc.settings.set_threshold(ref, "0")
    relevant = set(q["relevant"])
    liked = []
    for item in Digests(svc).preview(ref, DAY1).items:
        up = item.paper.id in relevant
        svc.vote(ref, "ann", item.paper.id, 1 if up else -1)
        liked += [item.paper.id] if up else []
    if votes_only:
        svc.follows.unsubscribe(ref, "all")
    svc.settings.set_size(ref, "10")
    return Digests(svc).preview(ref, DAY2).items, liked


class Tally:
    """The feedback figures of one query file and kind of channel."""

    def __init__(self, text: dict, keywords: dict, titles: dict) -> None:
        self.text, self.keywords, self.titles = text, keywords, titles
        self.c = {"items": 0, "named": 0, "same": 0, "words": 0, "found": 0}
        self.near: list[float] = []  # per channel: its picks' keyword Jaccard with the named 👍
        self.mean: list[float] = []  # ... and with all its 👍 papers

    def add(self, items, liked: list[str]) -> None:
        """Count one channel's day-2 digest."""
        whys = [i.why for i in items]
        self.c["items"] += len(items)
        self.c["same"] += sum(whys.count(w) > 1 for w in whys)
        near, mean = [], []
        for i in items:
            words = own_words(i.why)
            self.c["words"] += len(words)
            self.c["found"] += sum(w in self.text[i.paper.id] for w in words)
            m = LIKED.search(i.why)
            self.c["named"] += bool(m and liked)
            shown = m.group(1).rstrip("…") if m else None
            named = next((p for p in liked if shown and shown in self.titles[p]), None)
            if named is not None:
                kw = self.keywords[i.paper.id]
                near.append(jaccard(kw, self.keywords[named]))
                mean.append(np.mean([jaccard(kw, self.keywords[p]) for p in liked]))
        if near:
            self.near.append(float(np.mean(near)))
            self.mean.append(float(np.mean(mean)))

    def row(self, name: str, kind: str) -> list:
        """The table row."""
        c, a, b = self.c, np.array(self.near), np.array(self.mean)
        return [
            name,
            kind,
            c["items"],
            c["named"] / max(c["items"], 1),
            f"{a.mean():.3f} vs {b.mean():.3f}",
            fmt_ci(*paired_bootstrap(a, b), signed=True),
            c["found"] / max(c["words"], 1),
            c["same"] / max(c["items"], 1),
        ]


def feedback_rows(docs, text) -> list[list]:
    """The feedback table, per query file and kind of channel."""
    from bench.feedback import open_service

    keywords = {}
    for line in (EVAL_DIR / "papers.jsonl").open():
        obj = json.loads(line)
        keywords[obj["id"]] = {k.lower() for k in obj.get("keywords", [])}
    titles = {d.id: " ".join(d.title.replace("*", " ").split()) for d in docs}
    rows, n = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        svc, store = open_service(Path(tmp), docs)
        for name, queries in load_query_files().items():
            for votes_only in (False, True):
                tally = Tally(text, keywords, titles)
                for q in queries:
                    n += 1
                    tally.add(*day2(svc, n, q, votes_only))
                rows.append(tally.row(name, "👍/👎 only" if votes_only else "topic + 👍/👎"))
        store.close()
    return rows


def main() -> None:
    os.environ.setdefault("DIGESTBOT_SEMANTIC", "off")  # lexical ranking, as the table says
    docs, _ = load_eval()
    text = {d.id: set(WORD.findall(f"{d.title} {d.abstract}".lower())) for d in docs}
    rows = search_rows(docs, text)
    print(
        table(
            f"Why-lines, top 10 of every query ({machine()})",
            [
                "query file",
                "named words",
                "occur as written",
                "as written or as a singular",
                "hits sharing their why-line",
            ],
            rows,
        )
    )
    print(
        table(
            f"Why-lines of day-2 digests after 👍/👎 ({machine()})",
            [
                "query file",
                "channel",
                "picks",
                "name a 👍 paper",
                "keyword Jaccard: named 👍 vs any 👍",
                "difference [95% CI, by channel]",
                "own named words in the pick",
                "picks sharing their why-line",
            ],
            feedback_rows(docs, text),
        )
    )


if __name__ == "__main__":
    main()
