"""How the extractive TL;DR reads on the dev papers: the chosen sentence against the first one.

For each paper of the evaluation set (real titles) the TL;DR is chosen from its stored (clean)
abstract; the table says how often it is background ("Prior work…", "While…") or the abstract's
opening, how often it had to be cut with "…", how long it is, how specific it is (the real
title found among all real titles by TF-IDF cosine with the line: top-1 / top-5) and what one
costs (first time; shown again, a paper's line comes from a cache). A second table says, on the
bundled papers and the dev papers, how many lines cannot stand alone: they open by pointing
back ("This…", "We also…", "Independently, …", "…these positions…", "the same effect") or name
an acronym the card never spells out (target 0 on the bundled papers).
Run: python -m bench.tldr (the dev papers in ../shared/eval/neurips2023 are optional).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from bench.common import EVAL_DIR
from digest import BUNDLED_PAPERS
from digest.ingest.parse import parse_neurips_list
from digest.text.latex import clean_text
from digest.text.sentences import sentences
from digest.tldr.extractive import _BACKGROUND, _expanded, extractive_tldr, points_back, tidy


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


def context_shares(papers: list[tuple[str, str, bool]]) -> tuple[int, int, int]:
    """Of the TL;DR lines of ``papers`` (clean abstract, title, title derived): how many point
    back, how many name an acronym the card never spells out, and how many lines there are."""
    lines = [(extractive_tldr(a, t, d), a, t) for a, t, d in papers]
    lines = [(x, a, t) for x, a, t in lines if x]
    back = sum(points_back(x) for x, _, _ in lines)
    acronym = sum(not _expanded(x, a, t)[1] for x, a, t in lines)
    return back, acronym, len(lines)


def bundled_papers() -> list[tuple[str, str, bool]]:
    """The bundled papers as the store holds them (clean abstract, title, title derived)."""
    records = parse_neurips_list(BUNDLED_PAPERS.read_text(encoding="utf-8")).records
    return [(r.abstract, r.title, r.title_derived) for r in records]


def print_context_table(sets: dict[str, list[tuple[str, str, bool]]]) -> None:
    """The stand-alone table: lines pointing back and lines with an unexplained acronym."""
    print("| papers | lines | open by pointing back | name an unexplained acronym |")
    print("|---|---|---|---|")
    for name, papers in sets.items():
        back, acronym, n = context_shares(papers)
        print(f"| {name} | {n} | {back} ({back / n:.1%}) | {acronym} ({acronym / n:.1%}) |")


def main() -> None:
    sets = {"bundled (NeurIPS 2026)": bundled_papers()}
    dev = EVAL_DIR / "papers.jsonl"
    if not dev.exists():
        print(f"(no dev papers at {dev}: the bundled papers only)\n")
        print_context_table(sets)
        return
    rows = [json.loads(x) for x in dev.open(encoding="utf-8")]
    papers = [(clean_text(r["abstract"]), r["title"]) for r in rows]  # as the store holds them
    sets["dev (NeurIPS 2023)"] = [(a, t, False) for a, t in papers]
    print_context_table(sets)
    print(f"\n{len(papers)} dev papers\n")
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
