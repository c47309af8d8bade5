"""Is a shown score a probability? The reliability curve of search scores on both files.

For every query of both development files, the 100 best papers by `Ranker.search` with their
shown scores; relevance as labelled. Prints, per query kind (keyword: up to three typed content
words, as `SemanticParams.ramp_from`; theme: more), the share relevant in each score bin, then
an isotonic regression of relevance on score (scikit-learn) as a small table, and the lowest
score whose fitted relevance reaches one in two, one in three; `--write` stores the fitted
curves on a 0.02 grid as the package's `digest/rank/calibration.txt`. "shipped curve" is what
the stored curve reads for the papers of a bin (the shown share). With the semantic extra, the
queries where meaning has a share are ranked again with it fused in (MiniLM vectors cached by
bench.common) and get their own curve, "<kind>+meaning": fused scores are not lexical ones
(`--lexical` skips this):
    python -m bench.calibration [--write] [--lexical]
"""

from __future__ import annotations

import sys

import numpy as np
from sklearn.isotonic import IsotonicRegression

from bench.common import dense_vectors, load_eval, load_query_files, machine, table
from digest.rank.calibrate import CURVE_FILE, FUSED, KEYWORD_WORDS, curves, kind_of
from digest.rank.index import build_index
from digest.rank.ranker import Ranker

BINS = np.round(np.arange(0.0, 1.01, 0.1), 2)
GRID = np.round(np.arange(0.0, 1.0001, 0.02), 2)


def pairs(
    ranker: Ranker, queries: list[dict], fused_only: bool = False
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per curve (query kind, "+meaning" when meaning has a share of the score): (shown scores,
    relevant 0/1) of each query's top 100; ``fused_only``: only queries meaning has a share of."""
    out: dict[str, tuple[list[float], list[int]]] = {}
    for q in queries:
        compiled = ranker.compile(q["query"])
        kind = kind_of(compiled.words if compiled is not None else KEYWORD_WORDS)
        state = ranker.state(q["query"])
        if state is not None and state.dense is not None and state.dense.weight > 0:
            kind += FUSED
        elif fused_only:
            continue
        relevant = set(q["relevant"])
        res = ranker.search(q["query"], per_page=100, min_score=0.0, explain=False)
        scores, rel = out.setdefault(kind, ([], []))
        for h in res.hits:
            scores.append(h.score)
            rel.append(int(h.paper_id in relevant))
    return {k: (np.array(s), np.array(r)) for k, (s, r) in out.items() if s}


def rankers(docs, lexical_only: bool) -> list[tuple[Ranker, bool]]:
    """(ranker, fused only): lexical; and with meaning fused in, when the extra is installed."""
    out = [(Ranker(build_index(docs)), False)]
    if not lexical_only:
        from digest.index.embeddings import load_encoder

        encoder = load_encoder()
        if encoder is not None:
            index = build_index(docs)
            index.dense, index.has_dense = dense_vectors(docs, encoder), np.ones(len(docs), bool)
            out.append((Ranker(index, encoder=encoder), True))
    return out


def curve(scores: np.ndarray, rel: np.ndarray, fitted: np.ndarray, kind: str) -> list[list]:
    shipped = curves().get(kind) or curves().get(kind.removesuffix(FUSED))  # as relevance() reads
    read = np.interp(scores, *shipped) if shipped is not None else np.full(len(scores), np.nan)
    rows = []
    for lo, hi in zip(BINS[:-1], BINS[1:], strict=True):
        m = (scores >= lo) & ((scores < hi) if hi < 1 else (scores <= hi))
        if m.any():
            rows.append(
                [
                    f"{lo:.1f}-{hi:.1f}",
                    int(m.sum()),
                    float(scores[m].mean()),
                    float(rel[m].mean()),
                    float(fitted[m].mean()),
                    float(read[m].mean()),
                ]
            )
    return rows


def main() -> None:
    docs, _ = load_eval()
    got: dict[str, tuple[list, list]] = {}
    lines = [
        "# Share relevant at each shown score, development files (python -m bench.calibration --write)"
    ]
    for ranker, fused_only in rankers(docs, "--lexical" in sys.argv):
        for queries in load_query_files().values():
            for kind, (s, r) in pairs(ranker, queries, fused_only).items():
                a, b = got.setdefault(kind, ([], []))
                a.append(s)
                b.append(r)
    for kind, (s_parts, r_parts) in got.items():
        s, r = np.concatenate(s_parts), np.concatenate(r_parts)
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(s, r)
        fitted = iso.predict(s)
        print(
            table(
                f"Reliability of the shown score, {kind} queries, top 100 each ({machine()})",
                [
                    "score bin",
                    "papers",
                    "mean score",
                    "share relevant",
                    "isotonic fit",
                    "shipped curve",
                ],
                curve(s, r, fitted, kind),
            )
        )
        grid = np.round(np.arange(0.0, 1.001, 0.1), 2)
        print(
            "isotonic table (score -> relevance): "
            + ", ".join(f"{g:.1f}->{float(iso.predict([g])[0]):.2f}" for g in grid)
        )
        for target in (0.5, 1 / 3):
            ok = grid[iso.predict(grid) >= target]
            at = f"{ok.min():.1f}" if len(ok) else "none"
            print(f"lowest score fitted at >= {target:.2f} relevant ({kind}): {at}")
        print()
        lines += [
            f"{kind} {g:.2f} {float(y):.4f}" for g, y in zip(GRID, iso.predict(GRID), strict=True)
        ]
    if "--write" in sys.argv:
        CURVE_FILE.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"wrote {CURVE_FILE}")


if __name__ == "__main__":
    main()
