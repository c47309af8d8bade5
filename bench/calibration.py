"""Is a shown score a probability? The reliability curve of search scores on both files.

For every query of both development files, the 100 best papers by `Ranker.search` with their
shown scores; relevance as labelled. Prints, per query kind (keyword: up to three typed content
words, as `SemanticParams.ramp_from`; theme: more), the share relevant in each score bin, then
an isotonic regression of relevance on score (scikit-learn) as a small table, and the lowest
score whose fitted relevance reaches one in two, one in three; `--write` stores the fitted
curves on a 0.02 grid as the package's `digest/rank/calibration.txt`:
    python -m bench.calibration [--write]
"""

from __future__ import annotations

import sys

import numpy as np
from sklearn.isotonic import IsotonicRegression

from bench.common import load_eval, load_query_files, machine, table
from digest.rank.calibrate import CURVE_FILE, KEYWORD_WORDS, kind_of
from digest.rank.index import build_index
from digest.rank.ranker import Ranker

BINS = np.round(np.arange(0.0, 1.01, 0.1), 2)
GRID = np.round(np.arange(0.0, 1.0001, 0.02), 2)


def pairs(ranker: Ranker, queries: list[dict]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per query kind: (shown scores, relevant 0/1) of each query's top 100."""
    out: dict[str, tuple[list[float], list[int]]] = {"keyword": ([], []), "theme": ([], [])}
    for q in queries:
        compiled = ranker.compile(q["query"])
        kind = kind_of(compiled.words if compiled is not None else KEYWORD_WORDS)
        relevant = set(q["relevant"])
        res = ranker.search(q["query"], per_page=100, min_score=0.0, explain=False)
        for h in res.hits:
            out[kind][0].append(h.score)
            out[kind][1].append(int(h.paper_id in relevant))
    return {k: (np.array(s), np.array(r)) for k, (s, r) in out.items() if s}


def curve(scores: np.ndarray, rel: np.ndarray, fitted: np.ndarray) -> list[list]:
    rows = []
    for lo, hi in zip(BINS[:-1], BINS[1:], strict=True):
        m = (scores >= lo) & ((scores < hi) if hi < 1 else (scores <= hi))
        if m.any():
            rows.append([f"{lo:.1f}-{hi:.1f}", int(m.sum()), float(scores[m].mean()),
                         float(rel[m].mean()), float(fitted[m].mean())])  # fmt: skip
    return rows


def main() -> None:
    docs, _ = load_eval()
    ranker = Ranker(build_index(docs))
    got: dict[str, tuple[list, list]] = {}
    lines = [
        "# Share relevant at each shown score, development files (python -m bench.calibration --write)"
    ]
    for queries in load_query_files().values():
        for kind, (s, r) in pairs(ranker, queries).items():
            a, b = got.setdefault(kind, ([], []))
            a.append(s)
            b.append(r)
    for kind, (s_parts, r_parts) in got.items():
        s, r = np.concatenate(s_parts), np.concatenate(r_parts)
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(s, r)
        fitted = iso.predict(s)
        print(table(f"Reliability of the shown score, {kind} queries, top 100 each ({machine()})",
                    ["score bin", "papers", "mean score", "share relevant", "isotonic fit"],
                    curve(s, r, fitted)))  # fmt: skip
        grid = np.round(np.arange(0.0, 1.001, 0.1), 2)
        print("isotonic table (score -> relevance): "
              + ", ".join(f"{g:.1f}->{float(iso.predict([g])[0]):.2f}" for g in grid))  # fmt: skip
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
