"""How recognisable derived headlines are: dev papers with their real titles removed.

For each paper of the evaluation set the headline is derived from the abstract alone, then
(a) the real title is searched for among all real titles by TF-IDF cosine with the headline
(top-1 / top-5: would a reader who knows the titles find the paper?), and (b) the share of the
real title's content words the headline contains. Also: how often a headline is cut with "…"
and how often it is background ("Prior work…", "Recent…") rather than the contribution.
Run: python -m bench.headlines [--old PATH_TO_OLD_text.py] (needs ../shared/eval/neurips2023).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
from collections.abc import Callable

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from bench.common import EVAL_DIR
from digest.text.headline import derive_title

BACKGROUND = re.compile(
    r"^(prior|recent|existing|most|many|current|despite|while|although)\b", re.I
)
STOP = set(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "in",
        "on",
        "and",
        "to",
        "with",
        "via",
        "by",
        "from",
        "is",
        "are",
        "we",
        "our",
        "as",
        "at",
        "its",
    ]
)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP}


def evaluate(derive: Callable[[str], str], papers: list[dict]) -> dict[str, float]:
    """Recognition (top-1/top-5 among real titles), title-word recall, cut and background rates."""
    titles = [p["title"] for p in papers]
    heads = [derive(p["abstract"]) for p in papers]
    vec = TfidfVectorizer(sublinear_tf=True, stop_words="english").fit(titles + heads)
    sims = (vec.transform(heads) @ vec.transform(titles).T).toarray()
    order = np.argsort(-sims, axis=1)[:, :5]
    n = len(papers)
    recall = [
        len(_words(h) & _words(t)) / max(1, len(_words(t)))
        for h, t in zip(heads, titles, strict=True)
    ]
    return {
        "top1": sum(order[i, 0] == i for i in range(n)) / n,
        "top5": sum(i in order[i] for i in range(n)) / n,
        "word_recall": float(np.mean(recall)),
        "cut": sum(h.endswith("…") for h in heads) / n,
        "background": sum(bool(BACKGROUND.match(h)) for h in heads) / n,
        "mean_chars": float(np.mean([len(h) for h in heads])),
    }


def main() -> None:
    """Print one row per rule: the current one and, with --old, a previous text.py."""
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--old", help="a previous digest/text/headline.py whose derive_title to compare"
    )
    args = parser.parse_args()
    papers = [json.loads(line) for line in (EVAL_DIR / "papers.jsonl").open()]
    rules = {"current": derive_title}
    if args.old:
        spec = importlib.util.spec_from_file_location("old_text", args.old)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        rules = {"previous": module.derive_title, **rules}
    print(f"{len(papers)} dev papers, real titles removed")
    print(
        f"{'rule':<10} {'top-1':>6} {'top-5':>6} {'recall':>7} {'cut …':>6} {'backgr.':>8} {'chars':>6}"
    )
    for name, rule in rules.items():
        r = evaluate(rule, papers)
        print(
            f"{name:<10} {r['top1']:>6.1%} {r['top5']:>6.1%} {r['word_recall']:>7.1%} "
            f"{r['cut']:>6.1%} {r['background']:>8.1%} {r['mean_chars']:>6.0f}"
        )


if __name__ == "__main__":
    main()
