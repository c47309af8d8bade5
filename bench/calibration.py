"""Is a shown score a probability? Reliability curves on the four files, fitted and cross-validated.

For every query of the four development files (keywords, themes, paraphrases, library tasks), the
100 best papers with their raw scores: typed topics by `Ranker.search`, library tasks by
`Ranker.score_profile` of a channel following the 5 liked papers (every paper but those). Each
score belongs to a curve: the topic's kind (keyword: up to three typed content words and no list
of several things, theme: more, loose: a theme whose ten best matches hold under half its words'
weight; `calibrate.kind_of`), "+meaning" when meaning has a share of its score, "like" for the
liked papers' interest. Per curve a logistic regression of relevance on the score's logit and the
topic's coverage (three numbers; scikit-learn, default regularisation), its value capped at the
share relevant among the curve's ``CAP_TOP`` highest-scoring papers (`calibrate.logistic`).
`--isotonic` prints the former 51-point isotonic curves (shrunk towards the pooled curve and
capped) for comparison.

Cross-validation: the queries of each file are split in the two fixed halves of bench/crossval.py;
curves fitted on one half of every file are read on the other half, and the reverse. Expected
calibration error (ECE: 10 equal-width bins of the shown value, each bin's |mean shown - share
relevant| weighted by its papers) per file and on typed topics of more than three words, as
fitted (in-sample) and as cross-validated. Both rankers: the default install (lexical) and the
semantic extra (MiniLM vectors cached by bench.common). `--write` stores the curves fitted on all
queries as `digest/rank/calibration.txt`:
    python -m bench.calibration [--write] [--lexical] [--by words] [--isotonic]
"""

from __future__ import annotations

import os
import sys

import numpy as np
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from bench.common import dense_vectors, load_eval, machine, table
from bench.crossval import halves, load_files
from digest.rank.calibrate import (
    CURVE_FILE,
    EDGE,
    FUSED,
    KEYWORD_WORDS,
    LIKE,
    kind_of,
    lists,
    logistic,
)
from digest.rank.index import build_index
from digest.rank.profile import Profile
from digest.rank.ranker import Ranker

BINS = np.round(np.arange(0.0, 1.01, 0.1), 2)
GRID = np.round(np.arange(0.0, 1.0001, 0.02), 2)
SHRINK = 20  # papers near a score that weigh as much as the pooled curve
NEAR = 0.05  # "near": within this much of the score
#: What a topic's curve is chosen by: "coverage" (``calibrate.kind_of``'s bands, shipped) or
#: "words" (typed word count, before issue 34): `--by words`
BY = sys.argv[sys.argv.index("--by") + 1] if "--by" in sys.argv else "coverage"
CAP_BELOW = 200  # fewer papers than this at or above a score: the curve is capped there
CAP_TOP = 200  # a logistic curve shows no more than the share relevant among its best this many
MIN_QUERIES = 20  # a curve fitted on fewer queries is not shipped: its lexical kind reads it
ISOTONIC = "--isotonic" in sys.argv  # the former curves, for comparison


def pairs(ranker: Ranker, files: dict[str, list[dict]]) -> list[dict]:
    """One record per (query, top-100 paper): file, query number, fold, curve, score, relevant."""
    out = []
    index = ranker.index
    for name, queries in files.items():
        fold = halves(len(queries))
        for qi, q in enumerate(queries):
            relevant = set(q["relevant"])
            if name == "library":
                liked = {index.pos[i] for i in q["liked"]}
                rows = np.array([r for r in range(len(index)) if r not in liked], dtype=np.int64)
                best = ranker.score_profile(Profile(likes=tuple(q["liked"])), rows)[0]
                top = np.argsort(-best, kind="stable")[:100]
                hits = [(index.ids[rows[i]], float(best[i])) for i in top]
                # a taste's learner fuses meaning when the papers are embedded (feedback.learn)
                curve, words, cover = LIKE + (FUSED if index.dense is not None else ""), 0, None
            else:
                compiled = ranker.compile(q["query"])
                words = compiled.words if compiled is not None else KEYWORD_WORDS
                state = ranker.state(q["query"])
                cover = state.coverage if state is not None and BY == "coverage" else None
                curve = kind_of(words, cover, lists(q["query"]))
                if state is not None and state.dense is not None and state.dense.weight > 0:
                    curve += FUSED
                res = ranker.search(q["query"], per_page=100, min_score=0.0, explain=False)
                hits = [(h.paper_id, h.score) for h in res.hits]
            for pid, s in hits:
                out.append(
                    {
                        "file": name,
                        "q": qi,
                        "fold": int(fold[qi]),
                        "curve": curve,
                        "words": words,
                        "score": min(max(s, 0.0), 1.0),
                        "rel": int(pid in relevant),
                        "coverage": cover,
                    }
                )
    return out


def _x(records: list[dict]) -> np.ndarray:
    """A logistic curve's inputs: the raw score's logit and the topic's coverage (1.0: none)."""
    s = np.clip(np.array([x["score"] for x in records]), EDGE, 1 - EDGE)
    cov = np.array([1.0 if x["coverage"] is None else x["coverage"] for x in records])
    return np.column_stack([np.log(s / (1 - s)), cov])


def shipped(records: list[dict]) -> set[str]:
    """The curves fitted at all: those holding at least ``MIN_QUERIES`` queries (of all files;
    cross-validation fits the same curves on each half)."""
    queries: dict[str, set] = {}
    for x in records:
        queries.setdefault(x["curve"], set()).add((x["file"], x["q"]))
    return {c for c, q in queries.items() if len(q) >= MIN_QUERIES}


def fit_logistic(records: list[dict], kinds: list[dict] | None = None) -> dict[str, np.ndarray]:
    """Per curve (a, b, c, cap): relevance ~ logistic(a + b logit(score) + c coverage), capped at
    the share relevant among its ``CAP_TOP`` highest-scoring papers."""
    out = {}
    fitted = shipped(records if kinds is None else kinds)
    for curve in sorted({x["curve"] for x in records}):
        mine = [x for x in records if x["curve"] == curve]
        r = np.array([x["rel"] for x in mine])
        if r.min() == r.max() or curve not in fitted:
            continue  # read through its kind's lexical curve (``read``; calibrate.relevance)
        m = LogisticRegression().fit(_x(mine), r)
        s = np.array([x["score"] for x in mine])
        top = float(r[np.argsort(-s, kind="stable")[:CAP_TOP]].mean())
        out[curve] = np.array([float(m.intercept_[0]), *map(float, m.coef_[0]), top])
    return out


def _iso(s: np.ndarray, r: np.ndarray) -> IsotonicRegression:
    return IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(s, r)


def fit(records: list[dict], everything: list[dict] | None = None) -> dict[str, np.ndarray]:
    """The curves of ``records``: logistic (shipped) or, with `--isotonic`, isotonic; which
    curves are fitted is decided on ``everything`` (all queries) when given."""
    return fit_isotonic(records) if ISOTONIC else fit_logistic(records, everything)


def fit_isotonic(records: list[dict]) -> dict[str, np.ndarray]:
    """Per curve, its values on ``GRID``: isotonic, shrunk towards the pooled curve, capped."""
    s_all = np.array([x["score"] for x in records])
    r_all = np.array([x["rel"] for x in records])
    pooled = _iso(s_all, r_all).predict(GRID)
    out = {}
    for curve in sorted({x["curve"] for x in records}):
        s = np.array([x["score"] for x in records if x["curve"] == curve])
        r = np.array([x["rel"] for x in records if x["curve"] == curve])
        own = _iso(s, r).predict(GRID)
        near = np.array([int((np.abs(s - g) <= NEAR).sum()) for g in GRID])
        lam = near / (near + SHRINK)
        shrunk = lam * own + (1 - lam) * pooled
        out[curve] = np.maximum.accumulate(cap(shrunk, s, r))  # still a curve: never decreasing
    return out


def cap(curve: np.ndarray, s: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Where fewer than ``CAP_BELOW`` papers scored at least a score (the curve's uncertain top),
    the curve is no higher than the share relevant among them: a few top scores do not claim
    more than the papers above them showed."""
    out = curve.copy()
    for i, g in enumerate(GRID):
        above = r[s >= g]
        if len(above) < CAP_BELOW:
            out[i] = min(out[i], float(above.mean()) if len(above) else out[i - 1] if i else 0.0)
    return out


def read(curves: dict[str, np.ndarray], records: list[dict]) -> np.ndarray:
    """The shown value of each record through the curves (its own kind; lexical kind if none)."""
    out = np.zeros(len(records))
    for i, x in enumerate(records):
        c = curves.get(x["curve"])
        if c is None:
            c = curves.get(x["curve"].removesuffix(FUSED))
        if c is None:
            out[i] = x["score"]
        elif ISOTONIC:
            out[i] = np.interp(x["score"], GRID, c)
        else:
            out[i] = logistic(c, np.array([x["score"]]), x["coverage"])[0]
    return out


def ece(shown: np.ndarray, rel: np.ndarray) -> float:
    """Expected calibration error over 10 equal-width bins of the shown value."""
    if not len(shown):
        return float("nan")
    b = np.minimum((shown * 10).astype(int), 9)
    return float(
        sum(abs(shown[b == k].mean() - rel[b == k].mean()) * (b == k).sum() for k in np.unique(b))
        / len(shown)
    )


def reliability(shown: np.ndarray, rel: np.ndarray) -> list[list]:
    rows = []
    for lo, hi in zip(BINS[:-1], BINS[1:], strict=True):
        m = (shown >= lo) & ((shown < hi) if hi < 1 else (shown <= hi))
        if m.any():
            rows.append(
                [f"{lo:.1f}-{hi:.1f}", int(m.sum()), float(shown[m].mean()), float(rel[m].mean())]
            )
    return rows


def report(label: str, records: list[dict], write: bool) -> dict[str, np.ndarray]:
    full = fit(records)
    cv = np.zeros(len(records))
    for f in (0, 1):
        curves_f = fit([x for x in records if x["fold"] != f], records)
        idx = [i for i, x in enumerate(records) if x["fold"] == f]
        cv[idx] = read(curves_f, [records[i] for i in idx])
    fitted = read(full, records)
    rel = np.array([x["rel"] for x in records])
    rows = []
    groups = {
        n: [i for i, x in enumerate(records) if x["file"] == n]
        for n in dict.fromkeys(x["file"] for x in records)
    }
    groups["typed topics of more than 3 words"] = [
        i for i, x in enumerate(records) if x["file"] != "library" and x["words"] > KEYWORD_WORDS
    ]
    for n, idx in groups.items():
        rows.append([n, len(idx), ece(fitted[idx], rel[idx]), ece(cv[idx], rel[idx])])
    print(
        table(
            f"Expected calibration error, {label} ({machine()}, load average "
            f"{os.getloadavg()[0]:.1f})",
            ["papers of", "papers (top 100 each)", "ECE as fitted", "ECE cross-validated"],
            rows,
        )
    )
    for n, idx in groups.items():
        a = reliability(fitted[idx], rel[idx])
        b = {r[0]: r for r in reliability(cv[idx], rel[idx])}
        lines = [[r[0], r[1], r[2], r[3], *(b[r[0]][1:] if r[0] in b else ["", "", ""])] for r in a]
        print(
            table(
                f"Reliability, {label}, {n}",
                [
                    "shown bin",
                    "fitted: papers",
                    "mean shown",
                    "share relevant",
                    "cross-validated: papers",
                    "mean shown",
                    "share relevant",
                ],
                lines,
            )
        )
    return full


def main() -> None:
    docs, _ = load_eval()
    files = load_files()
    lexical = Ranker(build_index(docs))
    curves = report("default install (lexical)", pairs(lexical, files), False)
    if "--lexical" not in sys.argv:
        from bench.models import bench_encoder

        encoder = bench_encoder()
        if encoder is not None:
            index = build_index(docs)
            index.dense, index.has_dense = dense_vectors(docs, encoder), np.ones(len(docs), bool)
            sem = report(
                "semantic extra (MiniLM)", pairs(Ranker(index, encoder=encoder), files), False
            )
            curves.update({k: v for k, v in sem.items() if k.endswith(FUSED)})
    lines = [
        "# Share relevant at a raw score, four development files (python -m bench.calibration "
        "--write): kind a b c cap, shown = min(cap, 1 / (1 + exp(-(a + b logit(score) + c "
        "coverage))))"
    ]
    lines += [f"{kind} " + " ".join(f"{v:.4f}" for v in p) for kind, p in curves.items()]
    print("\n".join(lines))
    raws = (0.3, 0.4, 0.5, 0.6, 0.8, 1.0)
    shown = [
        [kind, cov, *(float(logistic(p, np.array([r]), cov)[0]) for r in raws)]
        for kind, p in ({} if ISOTONIC else curves).items()
        for cov in (
            (1.0,) if kind.startswith(LIKE) else (0.35,) if kind.startswith("loose") else (1.0, 0.7)
        )
    ]
    if not ISOTONIC:
        print(table("Shown at a raw score", ["curve", "coverage", *map(str, raws)], shown))
    if "--write" in sys.argv and not ISOTONIC:
        CURVE_FILE.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"wrote {CURVE_FILE}")


if __name__ == "__main__":
    main()
