"""How meaning joins the lexical score: its share (typed word count or what the corpus says),
and the fusion method (dense PRF, rank fusion, normalised mixing; ``--methods``).

Candidates (`SemanticParams.weight_by`), chosen before measuring: "words" (shipped: none up to
three content words, full share from seven); "reach" (share of papers any query word reaches,
1% -> none, 20% -> full share, log scale); "specific" (the same for its specific words only);
"flat" (top-10 lexical mean over the best: 0.70 -> none, 0.95 -> full); "either" (the larger of
"words" and "specific"). References, not candidates: every query at a fixed share. nDCG@10
on both files, each minus lexical and minus "words", paired bootstrap 95%; "mean share" is
meaning's average weight over the file's queries. Needs the semantic extra (dense vectors are
cached by bench.common, about 7 minutes idle to compute once):
    python -m bench.fusion

``--methods`` measures fusion methods instead, for every query at one setting: the query vector
moved towards the mean stored vector of its lexical top k (dense PRF) and mixed with the lexical
score at a fixed share ("mix", as the product fuses), reciprocal rank fusion over all papers or
within the lexical top N, the lexical top N re-scored by a mix of normalised scores, and both
scores min-max / z-normalised over the lexical candidates then mixed. Settings are chosen
without learning a file: untuned defaults, and each family's best on one file reported on the
other. Paired bootstrap 95% over queries against lexical; ms/query is the fusion step alone:
    python -m bench.fusion --methods
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from bench.common import (
    dense_vectors,
    load_eval,
    load_query_files,
    machine,
    paired_bootstrap,
    per_query,
    table,
    top_ids,
)
from bench.models import bench_encoder, query_vector
from bench.quality import fmt_ci
from digest.rank.calibrate import KEYWORD_WORDS
from digest.rank.index import build_index
from digest.rank.scorer import compile_query, score, topic_state
from digest.rank.semantic import SemanticParams, query_weight, unit

CANDIDATES = {
    "words (shipped)": SemanticParams(),
    "reach 1%..20%": SemanticParams(weight_by="reach"),
    "specific reach 1%..20%": SemanticParams(weight_by="specific"),
    "flat 0.70..0.95": SemanticParams(weight_by="flat"),
    "either (words or specific)": SemanticParams(weight_by="either"),
    "ref: every query 0.15": SemanticParams(max_weight=0.15, ramp_from=0, ramp_words=1),
    "ref: every query 0.35": SemanticParams(max_weight=0.35, ramp_from=0, ramp_words=1),
    "ref: every query 0.7": SemanticParams(ramp_from=0, ramp_words=1),
}


def ranker(index, encode, sp: SemanticParams | None, shares: list[float]):
    """digestbot's ranking as search sees it; records meaning's share of each query."""

    def rank(q: str) -> list[str]:
        cq = compile_query(index, q)
        if cq is None:
            return []
        state = topic_state(index, cq, None, encode(q) if sp else None, sp)
        shares.append(state.dense.weight if state.dense is not None else 0.0)
        return top_ids(index.ids, *score(index, state))

    return rank


# ---------------------------------------------------------------------------------------------
# Fusion methods (issue 22): dense pseudo-relevance feedback, rank fusion, normalised mixing.
# Each method re-scores one query from data the product already has at query time (the lexical
# scores, the query vector, the stored paper vectors); it is evaluated here, not in the ranker,
# so a few hundred configurations cost minutes. Only a method that holds on both files would
# move into digest/rank/.


@dataclass(frozen=True)
class QueryData:
    """One labelled query's inputs to every fusion method."""

    lex: np.ndarray  # BM25F of every paper, 0..1 (the PRF's source, as in dense_state)
    cands: np.ndarray  # lexical ranking's candidate rows
    hyb: np.ndarray  # lexical ranking's score (BM25F + LSA) of ``cands``
    hall: np.ndarray  # the same score for every paper (what mixing over all papers blends)
    qvec: np.ndarray
    rel: np.ndarray  # per paper, labelled relevant
    words: int


def prepare(index, encode, queries: list[dict]) -> list[QueryData]:
    """Lexical state, hybrid scores and query vector of each query, computed once."""
    out, every = [], np.arange(len(index.ids))
    for q in queries:
        cq = compile_query(index, q["query"])
        st = topic_state(index, cq)
        rows, hyb = score(index, st)
        relevant = set(q["relevant"])
        rel = np.fromiter((pid in relevant for pid in index.ids), bool, len(index.ids))
        out.append(
            QueryData(
                st.lex, rows, hyb, score(index, st, every)[1], encode(q["query"]), rel, cq.words
            )
        )
    return out


LOG2 = 1 / np.log2(np.arange(2, 12))


def ndcg_at_10(rows: np.ndarray, s: np.ndarray, rel: np.ndarray) -> float:
    """nDCG@10 of ``rows`` ordered by ``s`` (bench.common.ndcg without building id lists)."""
    k = min(10, len(s))
    top = np.argpartition(-s, k - 1)[:k]
    top = top[np.argsort(-s[top], kind="stable")]
    ideal = LOG2[: min(10, int(rel.sum()))].sum()
    return float((rel[rows[top]] * LOG2[:k]).sum() / ideal) if ideal else 0.0


def prf_vector(d: QueryData, vectors: np.ndarray, k: int, beta: float) -> np.ndarray:
    """The query vector moved towards the mean stored vector of its ``k`` best BM25F matches."""
    if k <= 0 or beta <= 0 or not d.lex.any():
        return d.qvec
    top = np.argpartition(-d.lex, k - 1)[:k]
    top = top[d.lex[top] > 0]
    return unit(d.qvec + beta * unit(vectors[top].mean(axis=0)))


def corpus_scaled(s: np.ndarray) -> np.ndarray:
    """Cosines z-scored over the corpus, best = 1, clipped at 0 (as dense_state does)."""
    s = (s - s.mean()) / max(float(s.std()), 1e-9)
    return np.clip(s / max(float(s.max()), 1e-9), 0.0, 1.0)


def normalised(x: np.ndarray, how: str) -> np.ndarray:
    """``x`` min-max scaled ("minmax") or z-scored ("z") within itself; as is otherwise."""
    if how == "minmax":
        lo, hi = float(x.min()), float(x.max())
        return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)
    if how == "z":
        sd = float(x.std())
        return (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)
    return x


def ranks(s: np.ndarray) -> np.ndarray:
    """1-based rank of each score, best first."""
    r = np.empty(len(s))
    r[np.argsort(-s, kind="stable")] = np.arange(1, len(s) + 1)
    return r


@dataclass(frozen=True)
class Method:
    """One fusion configuration: family, PRF (k, beta), weight of meaning, and the rest."""

    family: str  # words (shipped) | mix | rrf | rrf-top | rerank | normmix
    k: int = 0  # lexical top-k whose mean vector feeds the query (0: no PRF)
    beta: float = 0.0
    w: float = 0.3  # meaning's weight (mix: share; rrf: weight of the dense rank's term)
    top: int = 0  # rrf-top / rerank: only the lexical top N are re-ordered
    norm: str = ""  # rerank / normmix: "minmax", "z", or "" (mix's corpus scaling)
    c: int = 60  # RRF's constant
    # True: queries of more than three typed words keep the shipped fusion ("words"), so the
    # method only decides keyword queries, where the shipped fusion is lexical ranking.
    long_by_words: bool = False

    def label(self) -> str:
        if self.family == "words":
            return "words (shipped: mix, PRF k=10 β=1, share by word count)"
        prf = f"PRF k={self.k} β={self.beta:g}" if self.k else "no PRF"
        extra = {
            "mix": f"w={self.w:g}",
            "rrf": f"w={self.w:g}, c={self.c}",
            "rrf-top": f"w={self.w:g}, c={self.c}, top {self.top}",
            "rerank": f"w={self.w:g}, top {self.top}, {self.norm or 'corpus-scaled'}",
            "normmix": f"w={self.w:g}, {self.norm} over candidates",
        }[self.family]
        both = "; words rule above 3 words" if self.long_by_words else ""
        return f"{self.family} ({prf}; {extra}{both})"


def fused(d: QueryData, vectors: np.ndarray, m: Method) -> tuple[np.ndarray, np.ndarray]:
    """(rows, scores) of one query under method ``m``."""
    if m.family == "words" or (m.long_by_words and d.words > KEYWORD_WORDS):
        sp = SemanticParams()  # the product's fusion: PRF k=10 β=1, share by word count
        w = query_weight(d.words, sp)
        # The product scores meaning for every query (topic_state), even at no share.
        rows, s = fused(d, vectors, Method("mix", sp.prf_docs, sp.prf_beta, w))
        return (rows, s) if w > 0 else (d.cands, d.hyb)
    cos = vectors @ prf_vector(d, vectors, m.k, m.beta)
    if m.family == "mix":  # the product's fusion at a fixed share for every query
        dense = corpus_scaled(cos)
        rows = np.union1d(d.cands, np.argpartition(-dense, 999)[:1000])
        return rows, (1 - m.w) * d.hall[rows] + m.w * dense[rows]
    if m.family == "rrf":  # reciprocal rank fusion over all papers
        lex_rank = np.full(len(cos), 1e9)
        lex_rank[d.cands] = ranks(d.hyb)
        return np.arange(len(cos)), 1 / (m.c + lex_rank) + m.w / (m.c + ranks(cos))
    order = np.argsort(-d.hyb, kind="stable")
    top = order[: m.top] if m.top else order
    s = d.hyb.astype(np.float64) - 10.0  # below the re-ordered top, lexical order unchanged
    if m.family == "rrf-top":
        s[top] = 1 / (m.c + np.arange(1, len(top) + 1)) + m.w / (m.c + ranks(cos[d.cands[top]]))
    elif m.family in ("rerank", "normmix"):
        dense = corpus_scaled(cos)[d.cands[top]] if not m.norm else cos[d.cands[top]]
        s[top] = (1 - m.w) * normalised(d.hyb[top], m.norm) + m.w * normalised(dense, m.norm)
    else:
        raise ValueError(m.family)
    return d.cands, s


PRF = [(0, 0.0), (3, 1.0), (5, 1.0), (10, 1.0), (5, 2.0), (10, 2.0), (10, 4.0)]


def grid() -> list[Method]:
    """Every configuration measured (fixed before the run)."""
    out = []
    for k, beta in PRF:
        out += [Method("mix", k, beta, w) for w in (0.1, 0.2, 0.3, 0.5)]
        for w in (0.5, 1.0):
            out.append(Method("rrf", k, beta, w))
            out += [Method("rrf-top", k, beta, w, top=n) for n in (20, 50, 100)]
        out += [
            Method("rerank", k, beta, w, top=n, norm=h)
            for w in (0.2, 0.3, 0.5)
            for n in (20, 50, 100)
            for h in ("minmax", "z", "")
        ]
        out += [
            Method("normmix", k, beta, w, norm=h)
            for w in (0.1, 0.2, 0.3, 0.5)
            for h in ("minmax", "z")
        ]
    return out


#: Untuned settings per family, fixed without looking at these files' results: the product's
#: PRF (k=10, β=1), RRF's customary c=60 with equal weights, meaning at a third elsewhere.
DEFAULTS = [
    Method("mix", 10, 1.0, 0.3),
    Method("rrf", 10, 1.0, 1.0),
    Method("rrf-top", 10, 1.0, 1.0, top=50),
    Method("rerank", 10, 1.0, 0.3, top=50, norm="z"),
    Method("normmix", 10, 1.0, 0.3, norm="z"),
    Method("normmix", 0, 0.0, 0.3, norm="z"),
]


def cost_ms(
    data: list[QueryData], vectors: np.ndarray, methods: list[Method], rounds: int = 5
) -> dict[Method, float]:
    """Per method, the median over queries of its fusion step's wall time in ms, the lowest of
    ``rounds`` rounds that take every method in turn (the machine is shared: a busy spell then
    slows one round of every method, not every round of one). The lexical part and the query's
    encoding, which every semantic ranking pays, are not included."""
    best = dict.fromkeys(methods, float("inf"))
    for _ in range(rounds):
        for m in methods:
            times = []
            for d in data:
                t = time.perf_counter()
                fused(d, vectors, m)
                times.append(time.perf_counter() - t)
            best[m] = min(best[m], 1000 * float(np.median(times)))
    return best


def methods_study(index, encode, vectors: np.ndarray) -> None:
    """Every configuration on both files; the shipped fusion, defaults and cross-file picks in one
    table, then the best in-sample figures, the PRF line and what clears which bar."""
    files = load_query_files()
    data = {name: prepare(index, encode, qs) for name, qs in files.items()}
    lex = {f: np.array([ndcg_at_10(d.cands, d.hyb, d.rel) for d in ds]) for f, ds in data.items()}
    configs = grid()
    got = {
        m: {
            f: np.array([ndcg_at_10(*fused(d, vectors, m), d.rel) for d in ds])
            for f, ds in data.items()
        }
        for m in configs + DEFAULTS
    }
    names = list(files)
    # Cross-file protocol: the best configuration of a family on one file, reported on the other.
    picks: list[tuple[str, Method]] = [("shipped", Method("words"))]
    picks += [("default", m) for m in DEFAULTS]
    for tuned_on in names:
        for fam in ("mix", "rrf", "rrf-top", "rerank", "normmix"):
            best = max(
                (m for m in configs if m.family == fam), key=lambda m: got[m][tuned_on].mean()
            )
            picks.append((f"tuned on {tuned_on}", best))
    # The same, deciding keyword queries only: longer ones keep the shipped fusion.
    picks += [(how, replace(m, long_by_words=True)) for how, m in picks[1:]]
    for _, m in picks:
        if m not in got:
            got[m] = {
                f: np.array([ndcg_at_10(*fused(d, vectors, m), d.rel) for d in ds])
                for f, ds in data.items()
            }
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    shipped = got[Method("words")]
    header = [
        "method",
        "chosen",
        *(f"{f}: minus lexical [95% CI]" for f in names),
        *(f"{f}: minus shipped" for f in names),
        "ms/query",
    ]
    rows = [["lexical", "", *(f"{lex[f].mean():.4f}" for f in names), *[""] * len(names), "0"]]
    cost = cost_ms(
        [d for f in names for d in data[f]], vectors, list(dict.fromkeys(m for _, m in picks))
    )
    for how, m in picks:
        rows.append(
            [
                m.label(),
                how,
                *(fmt_ci(*paired_bootstrap(got[m][f], lex[f]), signed=True) for f in names),
                *(
                    ""
                    if m.family == "words"
                    else fmt_ci(*paired_bootstrap(got[m][f], shipped[f]), signed=True)
                    for f in names
                ),
                f"{cost[m]:.2f}",
            ]
        )
    print(
        table(
            f"Fusion methods, nDCG@10 minus lexical, both files ({len(configs)} "
            f"configurations; {machine()}, load {load:.1f})",
            header,
            rows,
        )
    )
    for f in names:  # the most any configuration reaches on a file, picked on that file itself
        best = max(configs, key=lambda m: got[m][f].mean())
        other = [o for o in names if o != f]
        print(
            f"best of {len(configs)} on {f} itself (in-sample, optimistic): {best.label()}: "
            f"{fmt_ci(*paired_bootstrap(got[best][f], lex[f]), signed=True)}; on "
            + ", ".join(
                f"{o}: {fmt_ci(*paired_bootstrap(got[best][o], lex[o]), signed=True)}"
                for o in other
            )
        )
    both = [m for m in configs if all(paired_bootstrap(got[m][f], lex[f])[1] > 0 for f in names)]
    above = [m for m in configs if all(got[m][f].mean() > lex[f].mean() for f in names)]
    parts = []
    for k, beta in [*PRF, (20, 1.0), (30, 1.0)]:  # how much the PRF brings, one fusion fixed
        m = Method("mix", k, beta, 0.3)
        gain = [
            np.mean([ndcg_at_10(*fused(d, vectors, m), d.rel) for d in data[f]]) - lex[f].mean()
            for f in names
        ]
        setting = f"k={k} β={beta:g}" if k else "no PRF"
        parts.append(
            f"{setting}: " + ", ".join(f"{f} {g:+.3f}" for f, g in zip(names, gain, strict=True))
        )
    print("dense PRF, mix at w=0.3, minus lexical: " + "; ".join(parts))
    one = [m for m in above if any(paired_bootstrap(got[m][f], lex[f])[1] > 0 for f in names)]
    print(
        f"configurations above lexical on both files: {len(above)} of {len(configs)}; and "
        f"beyond the interval on one: {len(one)}; on both: {len(both)}"
    )
    for m in one:  # chosen by looking at both files: a hint, not a result
        print(
            f"- {m.label()}: "
            + "; ".join(
                f"{f} {fmt_ci(*paired_bootstrap(got[m][f], lex[f]), signed=True)}" for f in names
            )
        )
    print()


def main() -> None:
    encoder = bench_encoder()
    if encoder is None:
        raise SystemExit("the semantic extra is needed")
    docs, _ = load_eval()
    index = build_index(docs)
    index.dense, index.has_dense = dense_vectors(docs, encoder), np.ones(len(docs), dtype=bool)
    encode = lru_cache(maxsize=None)(lambda q: query_vector(encoder, q))
    if "--methods" in sys.argv[1:]:
        methods_study(index, encode, index.dense)
        return
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    for name, queries in load_query_files().items():
        lex = per_query(ranker(index, encode, None, []), queries)[:, 0]
        got, share = {}, {}
        for c, sp in CANDIDATES.items():
            shares: list[float] = []
            got[c] = per_query(ranker(index, encode, sp, shares), queries)[:, 0]
            share[c] = float(np.mean(shares))
        words = got["words (shipped)"]
        rows = [["lexical", lex.mean(), "", "", "0"]] + [
            [
                c,
                v.mean(),
                fmt_ci(*paired_bootstrap(v, lex), signed=True),
                "" if c.startswith("words") else fmt_ci(*paired_bootstrap(v, words), signed=True),
                f"{share[c]:.2f}",
            ]
            for c, v in got.items()
        ]
        print(
            table(
                f"Meaning's share, {name}.jsonl, {len(queries)} queries ({machine()}, "
                f"load {load:.1f})",
                [
                    "weight by",
                    "nDCG@10",
                    "minus lexical [95% CI]",
                    "minus words [95% CI]",
                    "mean share",
                ],
                rows,
            )
        )


if __name__ == "__main__":
    main()
