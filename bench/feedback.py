"""Feedback through the real path: votes stored by the channel service, digests composed as delivered.

Per query a channel subscribes to the query text. Day 1: its digest (20 papers, diversity as
delivered) is shown and every item gets 👍 (relevant) or 👎 through `ChannelService.vote`, which
stores it. Day 2: the channel's next digest (size 10, threshold 0) over the papers it has not
seen, composed by `ChannelService.preview`, scored by nDCG@10 against the relevant papers not
yet shown. arxiv-sanity-lite's SVM (its own TF-IDF and LinearSVC settings) learns from the same
👍 papers. Both query files, paired-bootstrap intervals, lexical and (when the semantic extra is
installed) with sentence embeddings stored through the real ingest path:
python -m bench.feedback [--lexical | --semantic] [--votes N] [--svd-iter N] [--files a,b]
Library tasks (library.jsonl): the channel follows the 5 liked papers as `like:` (no typed text);
the SVM learns from them and the day-1 👍 papers.
The learning measure is the **lift**: day-2 nDCG@10 with votes minus the same channel's day-2
ranking had it not voted (diversified as a channel without votes is), paired bootstrap.
(``--svd-iter``: the index fitted with another number of LSA power iterations, to measure it.)
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC

from bench.common import (
    EVAL_DIR,
    load_eval,
    machine,
    ndcg,
    paired_bootstrap,
    ratio_interval,
    table,
    top_ids,
)
from bench.quality import fmt_ci
from digest.channels.service import ChannelService
from digest.delivery.compose import diversity_for
from digest.delivery.digests import Digests
from digest.index.lifecycle import doc_input
from digest.ingest.parse import make_record
from digest.models import ChannelRef, SubscriptionKind
from digest.papers.service import PaperService
from digest.rank.index import IndexParams, build_index
from digest.rank.profile import Profile
from digest.store import Store

DAY1, DAY2 = date(2026, 12, 1), date(2026, 12, 2)


def day1_size() -> int:
    """Papers shown (and voted on) on day 1: 20, or `--votes N` to see a channel with fewer votes."""
    args = sys.argv[1:]
    return int(args[args.index("--votes") + 1]) if "--votes" in args else 20


def index_params() -> IndexParams | None:
    """`--svd-iter N`: the index's LSA basis fitted with N power iterations (the default else)."""
    args = sys.argv[1:]
    return (
        IndexParams(svd_iter=int(args[args.index("--svd-iter") + 1]))
        if "--svd-iter" in args
        else None
    )


# arxiv-sanity-lite drops words in over 10% of papers; here that dropped 'learning',
# 'reinforcement', 'language', ... (bench/generic_words.py), words the queries are made of, so the
# reference keeps every word (issue 22).
SVM_MAX_DF = 1.0


def arxiv_sanity_features(docs):
    """arxiv-sanity-lite's TF-IDF (compute.py) over title and abstract."""
    v = TfidfVectorizer(
        input="content",
        encoding="utf-8",
        decode_error="replace",
        strip_accents="unicode",
        lowercase=True,
        analyzer="word",
        stop_words="english",
        token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b",
        ngram_range=(1, 2),
        max_features=20000,
        norm="l2",
        use_idf=True,
        smooth_idf=True,
        sublinear_tf=True,
        max_df=SVM_MAX_DF,
        min_df=5,
    )
    return v.fit_transform([f"{d.title}. {d.abstract}" for d in docs])


def svm_day2(x, ids, pos_of, liked: list[str], unseen: list[str]) -> list[str]:
    """arxiv-sanity-lite's recommender (serve.py): LinearSVC, 👍 papers against all others."""
    if not liked:
        return []
    y = np.zeros(x.shape[0])
    y[[pos_of[p] for p in liked]] = 1
    clf = LinearSVC(class_weight="balanced", verbose=False, max_iter=10000, tol=1e-6, C=0.1)
    clf.fit(x, y)
    rows = np.array([pos_of[p] for p in unseen])
    return top_ids(unseen, clf.decision_function(x[rows]), k=10)


class ReplayEncoder:
    """The real MiniLM encoder, except that paper texts embedded before are replayed from the
    benchmark cache (bench.common.dense_vectors; 7 CPU-minutes saved per run)."""

    def __init__(self, encoder, known: dict[str, np.ndarray]) -> None:
        self.encoder, self.known = encoder, known

    def encode(self, texts: list[str], batch: int = 16) -> np.ndarray:
        if all(t in self.known for t in texts):
            return np.stack([self.known[t] for t in texts]).astype(np.float32)
        return self.encoder.encode(texts, batch)


def open_service(folder: Path, docs, semantic: bool = False) -> tuple[ChannelService, Store]:
    """A channel service over a fresh SQLite store of ``docs``; embeddings stored when ``semantic``."""
    store = Store.open(f"sqlite:///{folder / 'bench.db'}")
    store.papers.upsert(
        [make_record(source="jsonl", id=d.id, title=d.title, abstract=d.abstract) for d in docs]
    )
    papers = PaperService(store, folder / "index")
    indexes = papers.indexes
    if (params := index_params()) is not None:  # the fit is the only thing that changes
        indexes._rebuild = lambda: build_index(
            [doc_input(p) for p in store.papers.iter_all()], params
        )
    if not semantic:
        indexes.encoder = indexes.embeddings = None  # lexical ranking, as without the extra
    else:
        from bench.common import dense_vectors
        from digest.index.embeddings import paper_text

        vecs = dense_vectors(docs, indexes.encoder)
        known = {paper_text(d.title, d.abstract): v for d, v in zip(docs, vecs, strict=True)}
        indexes.encoder = indexes.embeddings.encoder = ReplayEncoder(indexes.encoder, known)
        indexes.embed_new()  # stored as ingest stores them
    return ChannelService(papers), store


@dataclass
class Run:
    """Per-channel day-2 nDCG@10 of each system, and compose times."""

    ours: list[float] = field(default_factory=list)
    plain: list[float] = field(default_factory=list)
    svm: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)


def profile_of(q: dict) -> Profile:
    """What the channel of a query follows: its text, or (a library task) its 5 liked papers."""
    if "liked" in q:
        return Profile(likes=tuple(q["liked"]))
    return Profile(topics=(q["query"],))


def day1(svc: ChannelService, n: int, q: dict) -> tuple[ChannelRef, list[str]]:
    """Channel ``n`` follows the query (or a library task's 5 liked papers as `like:`); its first
    digest (20) is shown and every item voted on."""
    size = day1_size()
    ref = ChannelRef("bench", f"c{n}")
    if "liked" in q:
        for pid in q["liked"]:
            svc.follows.add(ref, SubscriptionKind.LIKE, pid)
    else:
        svc.follows.add(ref, SubscriptionKind.TOPIC, q["query"])
    svc.settings.set_size(ref, str(size))
    svc.settings.set_threshold(ref, "0")
    shown = [i.paper.id for i in Digests(svc).preview(ref, DAY1).items]
    relevant = set(q["relevant"])
    for pid in shown:
        svc.vote(ref, "ann", pid, 1 if pid in relevant else -1)
    svc.settings.set_size(ref, "10")
    return ref, shown


def day2(svc: ChannelService, ref: ChannelRef) -> tuple[list[str], float]:
    """(the channel's next digest, CPU ms to compose it) as the channel service delivers it."""
    t = time.process_time()
    ids = [i.paper.id for i in Digests(svc).preview(ref, DAY2).items]
    return ids, (time.process_time() - t) * 1000


def no_votes(svc: ChannelService, profile: Profile, unseen: list[str]) -> list[str]:
    """Reference: the same channel's day-2 picks among the same papers had it not voted."""
    # diversified as a channel with no votes is
    picks = svc.papers.ranker().rank(profile, unseen, 10, 0.0, diversity_for(profile))
    return [h.paper_id for h in picks.hits]


def evaluate(svc: ChannelService, queries: list[dict], x, ids: list[str], start: int) -> Run:
    """Day-2 nDCG@10 per channel (channels whose relevant papers were all shown are skipped)."""
    pos_of = {pid: i for i, pid in enumerate(ids)}
    out = Run()
    for n, q in enumerate(queries, start):
        ref, shown = day1(svc, n, q)
        picks, took = day2(svc, ref)
        relevant = set(q["relevant"])
        target = relevant - set(shown)
        if not target:
            continue
        unseen = [p for p in ids if p not in set(shown) | set(q.get("liked", ()))]
        out.ours.append(ndcg(picks, target))
        out.plain.append(ndcg(no_votes(svc, profile_of(q), unseen), target))
        liked = [p for p in shown if p in relevant] + list(q.get("liked", ()))
        out.svm.append(ndcg(svm_day2(x, ids, pos_of, liked, unseen), target))
        out.cpu_ms.append(took)
    return out


def report(name: str, variant: str, r: Run, n_docs: int) -> None:
    """One Markdown table per query file and variant."""
    a, p, b = np.array(r.ours), np.array(r.plain), np.array(r.svm)
    rows = [
        [
            f"digestbot, topic + 👍/👎 (real path, {variant})",
            a.mean(),
            fmt_ci(*ratio_interval(a, b)),
        ],
        [f"digestbot, topic only, no votes ({variant})", p.mean(), fmt_ci(*ratio_interval(p, b))],
        ["arxiv-sanity-lite SVM", b.mean(), "1.000"],
    ]
    votes = f"{day1_size()} votes each"
    print(
        table(
            f"Feedback, {name}.jsonl, {variant}, {votes}: day-2 nDCG@10 over {len(a)} channels ({machine()})",
            ["system", "day-2 nDCG@10", "ratio vs SVM [95% CI]"],
            rows,
        )
    )
    lift = fmt_ci(*paired_bootstrap(a, p), signed=True)
    print(
        f"**Lift** ({name}.jsonl, {variant}, {votes}): day-2 nDCG@10 with votes minus the same "
        f"topic's ranking without votes = {lift} (paired bootstrap 95%)"
    )
    print(
        f"day-2 digest compose (store reads, feedback model, MMR), {n_docs} papers, CPU: "
        f"p50 {np.median(r.cpu_ms):.0f} ms, p90 {np.percentile(r.cpu_ms, 90):.0f} ms\n"
    )


def feedback_files() -> dict[str, list[dict]]:
    """The query files measured: keywords and themes, and library tasks (5 liked papers followed
    as `like:`); `--files queries,library` for some of them."""
    import json

    names = ("queries", "themes", "library")
    if "--files" in sys.argv:
        names = tuple(sys.argv[sys.argv.index("--files") + 1].split(","))
    return {
        n: [json.loads(line) for line in (EVAL_DIR / f"{n}.jsonl").open()]
        for n in names
        if (EVAL_DIR / f"{n}.jsonl").exists()
    }


def variants() -> list[str]:
    """Lexical always; with semantic ranking too when the extra is installed (or asked for alone)."""
    from digest.index.embeddings import semantic_available

    asked = [a.removeprefix("--") for a in sys.argv[1:]]
    names = ["lexical", "semantic"] if semantic_available() else ["lexical"]
    return [v for v in names if v in asked] or names


def main() -> None:
    docs, _ = load_eval()
    ids = [d.id for d in docs]
    x = arxiv_sanity_features(docs)
    for variant in variants():
        with tempfile.TemporaryDirectory() as tmp:
            svc, store = open_service(Path(tmp), docs, semantic=variant == "semantic")
            start = 1
            for name, queries in feedback_files().items():
                report(name, variant, evaluate(svc, queries, x, ids, start), len(docs))
                start += len(queries)
            store.close()


if __name__ == "__main__":
    main()
