"""How the extractive TL;DR reads on the dev papers: the chosen sentence against the first one.

For each paper of the evaluation set (real titles) the TL;DR is chosen from its stored (clean)
abstract; the table says how often it is background ("Prior work…", "While…") or the abstract's
opening, how often it had to be cut with "…", how long it is, how specific it is (the real
title found among all real titles by TF-IDF cosine with the line: top-1 / top-5) and what one
costs (first time; shown again, a paper's line comes from a cache).
Run: python -m bench.tldr (needs ../shared/eval/neurips2023).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from bench.common import EVAL_DIR
from digest.text.latex import clean_text
from digest.text.sentences import sentences
from digest.tldr.extractive import _BACKGROUND, extractive_tldr, tidy


def first_sentence(abstract: str, title: str) -> str:
    """The baseline: the abstract's first sentence, tidied the same way."""
    sents = sentences(abstract)
    return tidy(sents[0]) if sents else ""


def evaluate(pick: Callable[[str, str], str], papers: list[tuple[str, str]]) -> dict[str, float]:
    """Rates over ``papers`` (clean abstract, title) for one way of picking the line."""
    t0 = time.perf_counter()
    lines = [pick(a, t) for a, t in papers]
    ms = (time.perf_counter() - t0) / len(papers) * 1000
    n = len(papers)
    titles = [t for _, t in papers]
    vec = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit(titles + lines)
    sims = (vec.transform(lines) @ vec.transform(titles).T).toarray()
    ranks = (sims > sims[np.arange(n), np.arange(n)][:, None]).sum(axis=1)
    opening = sum(
        bool(line) and clean_text(a).startswith(line.removesuffix("…")[:40])
        for line, (a, _) in zip(lines, papers, strict=True)
    )
    return {
        "top-1": float(np.mean(ranks == 0)),
        "top-5": float(np.mean(ranks < 5)),
        "background": sum(bool(_BACKGROUND.match(x)) for x in lines) / n,
        "opening": opening / n,
        "cut": sum(x.endswith("…") for x in lines) / n,
        "empty": sum(not x for x in lines) / n,
        "chars": float(np.mean([len(x) for x in lines if x])),
        "ms": ms,
    }


def main() -> None:
    rows = [json.loads(x) for x in (EVAL_DIR / "papers.jsonl").open(encoding="utf-8")]
    papers = [(clean_text(r["abstract"]), r["title"]) for r in rows]  # as the store holds them
    print(f"{len(papers)} dev papers\n")
    print(
        "| rule | top-1 | top-5 | background | opening | cut with … | empty | mean chars | ms/paper |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    rules = {"first sentence": first_sentence, "TL;DR rule": extractive_tldr}
    for name, pick in rules.items():
        r = evaluate(pick, papers)
        print(
            f"| {name} | {r['top-1']:.1%} | {r['top-5']:.1%} | {r['background']:.1%} | "
            f"{r['opening']:.1%} | {r['cut']:.1%} | {r['empty']:.1%} | {r['chars']:.0f} | "
            f"{r['ms']:.2f} |"
        )


if __name__ == "__main__":
    main()
