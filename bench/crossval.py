"""Four files, cross-validated: a protocol that cannot overfit (issue 34).

Every ranking configuration is judged on all four development files over the 3,218 NeurIPS 2023
papers: keywords (queries.jsonl), themes, paraphrases (themes reworded without their label
words) and library tasks (5 liked papers followed as `like:`, no typed text; every paper but the
liked ones is ranked). nDCG@10 per query, paired bootstrap 95% intervals against today's lexical
ranking (the code of 2026-12-02: lexical, `like:` papers each scored by LSA closeness).

Cross-validation: each file's queries are split in two halves by a fixed seed. A family's
parameter is chosen on one half of every file (the mean of the four files' means, each file
counting once) and reported on the other half, and the reverse; the two reported halves make one
cross-validated score per query, which is what the intervals are computed on. A configuration
without a free parameter is its own family of one (nothing is fitted).

Every system ranks through the product's code (`Ranker.score_profile` for library tasks,
`scorer.topic_state`/`score` for typed topics, `SemanticParams` / `ScoreParams` as shipped or
varied); the references (TF-IDF, BM25, dense only, the centroids) are the benches' own.
    python -m bench.crossval [--lexical] [--params] [--score-params]
(``--lexical``: without the semantic extra; ``--params``: the free-parameter count only;
``--score-params``: the word score's constants, each cross-validated against a lower and a
higher value, minus lexical as shipped.)
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import replace

import numpy as np

from bench.common import (
    EVAL_DIR,
    bm25_baseline,
    dense_vectors,
    load_eval,
    machine,
    ndcg,
    paired_bootstrap,
    table,
    tfidf_baseline,
    top_ids,
)
from bench.models import bench_encoder, query_vector
from digest.rank.index import build_index
from digest.rank.profile import Profile
from digest.rank.ranker import Ranker
from digest.rank.scorer import ScoreParams, compile_query, score, topic_state
from digest.rank.semantic import SemanticParams

FILES = (
    ("keywords", "queries"),
    ("themes", "themes"),
    ("paraphrases", "paraphrases"),
    ("library", "library"),
)
SEED = 34  # the fixed split of each file's queries into two halves
TODAY = "today lexical (2026-12-02)"
SHIPPED = "lexical as shipped (this branch)"


def load_files() -> dict[str, list[dict]]:
    """The four development files, by short name."""
    return {
        name: [json.loads(line) for line in (EVAL_DIR / f"{stem}.jsonl").open()]
        for name, stem in FILES
    }


def halves(n: int, seed: int = SEED) -> np.ndarray:
    """0/1 fold of each of ``n`` queries: a fixed random half each."""
    fold = np.zeros(n, dtype=np.int64)
    fold[np.random.default_rng(seed).permutation(n)[n // 2 :]] = 1
    return fold


# --- how a configuration ranks one query of each kind ----------------------------------------


def typed_ranker(index, encoder, sp: SemanticParams | None, p: ScoreParams | None = None):
    """A typed topic's ranking as search sees it: lexical (``sp`` None) or fused with meaning."""

    def rank(q: dict) -> list[str]:
        cq = compile_query(index, q["query"], p)
        if cq is None:
            return []
        qvec = query_vector(encoder, q["query"]) if sp is not None else None
        state = topic_state(index, cq, p, qvec, sp)
        return top_ids(index.ids, *score(index, state, p=p))

    return rank


def library_ranker(ranker: Ranker | None = None, space: np.ndarray | None = None):
    """A library task ranked by a channel following the 5 liked papers as `like:`: through
    ``Ranker.score_profile`` (the product's code), or, with ``space``, today's per-paper best
    closeness in that space (the code of 2026-12-02)."""

    def rank(q: dict) -> list[str]:
        index = ranker.index if ranker is not None else None
        ids = index.ids
        liked = {index.pos[i] for i in q["liked"]}
        rows = np.array([r for r in range(len(ids)) if r not in liked], dtype=np.int64)
        if space is not None:
            s = np.clip(space[rows] @ space[sorted(liked)].T, 0.0, 1.0).max(axis=1)
        else:
            s = ranker.score_profile(Profile(likes=tuple(q["liked"])), rows)[0]
        return top_ids(ids, rows, s.astype(np.float64))

    return rank


def with_percentile(pct: float, rank):
    """``rank`` with ``profile.RELATED_PERCENTILE`` at ``pct`` (a fresh Ranker reads it once)."""
    from digest.rank import profile

    def run(q: dict) -> list[str]:
        kept, profile.RELATED_PERCENTILE = profile.RELATED_PERCENTILE, pct
        try:
            return rank(q)
        finally:
            profile.RELATED_PERCENTILE = kept

    return run


def centroid_ranker(ids: list[str], matrix, pos: dict[str, int]):
    """Reference: cosine to the mean of the liked papers' rows (dense or TF-IDF)."""
    from sklearn.preprocessing import normalize

    m = normalize(matrix) if hasattr(matrix, "tocsr") else matrix

    def rank(q: dict) -> list[str]:
        liked = [pos[i] for i in q["liked"]]
        c = np.asarray(m[liked].mean(axis=0)).ravel()
        s = np.asarray(m @ c).ravel().astype(np.float64)
        s[liked] = -np.inf
        return top_ids(ids, s)

    return rank


# --- the protocol ---------------------------------------------------------------------------


def per_query(system: dict, files: dict[str, list[dict]]) -> dict[str, np.ndarray]:
    """nDCG@10 of every query of every file under one configuration: ``system`` maps a file's
    kind ("typed" or "library") to a rank function (None: the configuration does not rank it)."""
    out = {}
    for name, qs in files.items():
        fn = system.get("library" if name == "library" else "typed")
        if fn is None:
            continue
        out[name] = np.array([ndcg(fn(q), set(q["relevant"])) for q in qs])
    return out


def cross_validate(family: dict[str, dict], files: dict[str, list[dict]]) -> dict:
    """A family (setting label -> system): per file, the cross-validated nDCG@10 per query, and
    which setting each fold chose. One setting: nothing is fitted, the scores are its own."""
    runs = {label: per_query(system, files) for label, system in family.items()}
    names = [n for n in files if all(n in r for r in runs.values())]
    folds = {n: halves(len(files[n])) for n in names}
    out = {n: np.zeros(len(files[n])) for n in names}
    chosen = []
    for f in (0, 1):
        train = {
            label: float(np.mean([runs[label][n][folds[n] != f].mean() for n in names]))
            for label in family
        }
        best = max(family, key=train.__getitem__)  # ties: the first listed (the simplest)
        chosen.append(best)
        for n in names:
            out[n][folds[n] == f] = runs[best][n][folds[n] == f]
    return {"scores": out, "chosen": chosen, "runs": runs}


def fmt(m: float, lo: float, hi: float) -> str:
    return f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def load() -> str:
    return f"load average {os.getloadavg()[0]:.1f}"


# --- free parameters ------------------------------------------------------------------------


def free_parameters() -> list[tuple[str, int, str]]:
    """(where, count, what) of the constants in digest/rank/ fitted on the development data."""
    from dataclasses import fields

    from digest.rank import calibrate
    from digest.rank.feedback import FeedbackParams

    fitted_index = ("title_weight", "k1", "b", "n_components")
    fitted_score = tuple(
        f.name
        for f in fields(ScoreParams)
        if f.name not in ("candidates", "fb_terms", "fb_term_scale", "fb_pos", "fb_neg")
    )
    fitted_fb = tuple(
        f.name for f in fields(FeedbackParams) if f.name not in ("prf_skips_disliked",)
    )
    curve_numbers = sum(len(p) for p in calibrate.curves().values())
    return [
        ("IndexParams (BM25F, LSA size)", len(fitted_index), ", ".join(fitted_index)),
        ("ScoreParams (word score, LSA, PRF)", len(fitted_score), ", ".join(fitted_score)),
        (
            "SemanticParams in use (coverage rule)",
            4,
            "prf_docs, prf_beta, max_weight (the cap), coverage_gain (1.0: not fitted)",
        ),
        ("FeedbackParams (votes)", len(fitted_fb), ", ".join(fitted_fb)),
        ("profile.py authors", 3, "AUTHOR_BASE, AUTHOR_LEAD, AUTHOR_TOPIC"),
        ("profile.py liked papers", 1, "RELATED_PERCENTILE"),
        ("calibrate.py", 2, "KEYWORD_WORDS, LOOSE (the list rule, `calibrate.lists`, has none)"),
        ("diversity / why thresholds", 3, "NEAR_DUPLICATE, why.LIKED, SemanticParams.close"),
        (
            "calibration.txt: a, b, c, cap per curve",
            curve_numbers,
            ", ".join(sorted(calibrate.curves())),
        ),
    ]


# --- main -----------------------------------------------------------------------------------


def main() -> None:
    t0 = time.time()
    files = load_files()
    docs, _ = load_eval()
    lexical_index = build_index(docs)
    encoder = None if "--lexical" in sys.argv else bench_encoder()
    print(f"## Four files, cross-validated ({machine()}, {load()})\n")
    print(", ".join(f"{n}: {len(q)} queries" for n, q in files.items()) + f"; {len(docs)} papers\n")
    if "--params" in sys.argv:
        print_params()
        return
    lex_ranker = Ranker(lexical_index)
    families: dict[str, dict[str, dict]] = {}
    if "--score-params" in sys.argv:  # the word score's constants, each against its neighbours
        results = {}
        for name, values in SCORE_GRID.items():
            family = {}
            for v in values:
                sp = replace(ScoreParams(), **{name: v})
                family[f"{name} {v:g}"] = {
                    "typed": typed_ranker(lexical_index, None, None, sp),
                    "library": library_ranker(Ranker(lexical_index, sp)),
                }
            results[f"lexical, ScoreParams.{name} fitted {values}"] = cross_validate(family, files)
        results[SHIPPED] = cross_validate(
            {
                "-": {
                    "typed": typed_ranker(lexical_index, None, None),
                    "library": library_ranker(lex_ranker),
                }
            },
            files,
        )
        print_results(results, list(files), SHIPPED)
        return
    # today's lexical, as shipped on 2026-12-02: typed topics lexical, likes by LSA closeness
    families[TODAY] = {
        "-": {
            "typed": typed_ranker(lexical_index, None, None),
            "library": library_ranker(lex_ranker, space=lexical_index.latent),
        }
    }
    families["lexical, liked papers as one interest (default install)"] = {
        "-": {
            "typed": typed_ranker(lexical_index, None, None),
            "library": library_ranker(lex_ranker),
        }
    }
    vectors = None
    if encoder is not None:
        vectors = dense_vectors(docs, encoder)
        sem = build_index(docs)
        sem.dense, sem.has_dense = vectors, np.ones(len(docs), dtype=bool)
        sem_ranker = Ranker(sem, encoder=encoder)
        old = SemanticParams(weight_by="words", prf_beta=1.0, prf_from="lexical")
        families["semantic 2026-12-02 (word-count share, likes by embedding)"] = {
            "-": {
                "typed": typed_ranker(sem, encoder, old),
                "library": library_ranker(sem_ranker, space=vectors),
            }
        }
        families["semantic, coverage share (shipped, nothing fitted)"] = {
            "-": {
                "typed": typed_ranker(sem, encoder, SemanticParams()),
                "library": library_ranker(sem_ranker),
            }
        }
        families["semantic, coverage share, gain fitted {0.5,1,1.5,2}"] = {
            f"gain {g}": {
                "typed": typed_ranker(sem, encoder, SemanticParams(coverage_gain=g)),
                "library": library_ranker(sem_ranker),
            }
            for g in (1.0, 0.5, 1.5, 2.0)
        }
        families["semantic, coverage share, dense PRF beta fitted {1,2,3}"] = {
            f"beta {b}": {
                "typed": typed_ranker(sem, encoder, SemanticParams(prf_beta=b)),
                "library": library_ranker(sem_ranker),
            }
            for b in (2.0, 1.0, 3.0)
        }
        families["semantic, fixed share fitted {0.1..0.9}"] = {
            f"share {w}": {
                "typed": typed_ranker(sem, encoder, _fixed(w)),
                "library": library_ranker(sem_ranker),
            }
            for w in (0.1, 0.3, 0.5, 0.7, 0.9)
        }
        families["semantic, liked papers' parts percentile fitted {0 (one part),70,80,90}"] = {
            f"percentile {pct:g}": {
                "typed": typed_ranker(sem, encoder, SemanticParams()),
                "library": with_percentile(pct, library_ranker(Ranker(sem, encoder=encoder))),
            }
            for pct in (80.0, 0.0, 70.0, 90.0)
        }
        families["dense only (MiniLM; library: dense centroid)"] = {
            "-": {
                "typed": lambda q: top_ids(sem.ids, vectors @ query_vector(encoder, q["query"])),
                "library": centroid_ranker(sem.ids, vectors, sem.pos),
            }
        }
    _, tfidf_x, tfidf_rank = tfidf_baseline(docs)
    families["TF-IDF cosine (library: TF-IDF centroid)"] = {
        "-": {
            "typed": lambda q: tfidf_rank(q["query"]),
            "library": centroid_ranker(lexical_index.ids, tfidf_x.tocsr(), lexical_index.pos),
        }
    }
    bm25 = bm25_baseline(docs)[1]
    families["BM25 (bm25s)"] = {"-": {"typed": lambda q: bm25(q["query"])}}

    results = {name: cross_validate(fam, files) for name, fam in families.items()}
    print_results(results, list(files), TODAY)
    print_params()
    print(f"({time.time() - t0:.0f} s, {load()})")


#: The word score's constants (ScoreParams), the shipped value first, with a lower and a higher one.
SCORE_GRID = {
    "latent_weight": (0.5, 0.3, 0.7),
    "prf_beta": (3.0, 1.5, 5.0),
    "prf_docs": (5, 3, 10),
    "family_weight": (0.5, 0.0, 1.0),
    "phrase_weight": (1.0, 0.5, 2.0),
    "expansion_weight": (0.6, 0.3, 1.0),
}


def print_results(results: dict, names: list[str], base_name: str) -> None:
    """The cross-validated table (minus ``results[base_name]``) and each fitted family's settings."""
    base = results[base_name]["scores"]
    rows = []
    for name, res in results.items():
        row = [name]
        for n in names:
            s = res["scores"].get(n)
            if s is None:
                row.append("")
                continue
            cell = f"{s.mean():.4f}"
            if name != base_name:
                cell += " (" + fmt(*paired_bootstrap(s, base[n])) + ")"
            row.append(cell)
        chosen = res["chosen"]
        row.append("—" if chosen == ["-", "-"] else f"{chosen[0]} / {chosen[1]}")
        rows.append(row)
    print(
        table(
            f"nDCG@10, cross-validated; minus {base_name} [paired bootstrap 95%]",
            ["configuration", *names, "fitted on half A / half B"],
            rows,
        )
    )
    # in-sample view of the fitted families: every setting on every whole file
    for name, res in results.items():
        if len(res["runs"]) <= 1:
            continue
        lines = [
            [label, *[f"{r[n].mean():.4f}" for n in names if n in r]]
            for label, r in res["runs"].items()
        ]
        print(
            table(
                f"{name}: each setting on whole files (in-sample, for reference)",
                ["setting", *[n for n in names if n in next(iter(res["runs"].values()))]],
                lines,
            )
        )


def _fixed(w: float) -> SemanticParams:
    """Meaning at one share for every query (a reference family: one fitted constant)."""
    return replace(SemanticParams(), weight_by="words", ramp_from=-1, ramp_words=1, max_weight=w)


def print_params() -> None:
    rows = [[w, n, what] for w, n, what in free_parameters()]
    total = sum(r[1] for r in rows[:-1])
    print(
        table(
            "Free parameters of the ranker (constants fitted on the development data)",
            ["where", "count", "which"],
            rows,
        )
    )
    print(f"scalar constants: {total}; plus {rows[-1][1]} fitted numbers in calibration.txt\n")


if __name__ == "__main__":
    main()
