"""The background list of generic words: terms in at least 10% of the development papers.

A word that one paper in ten uses ('model', 'neural', 'network') names no topic on its own in
any corpus of research papers, however few papers a channel has stored (19 bundled papers cannot
tell 'neural' from 'unlearning'). A phrase of such words is generic too ('neural network'), unless
it names a topic: most papers using its rarer word use the phrase ('reinforcement learning',
``weak.NAMED_SHARE``); those are listed as 'phrase: ...' lines. Prints each term's share, the
phrases of generic words in at least 3% of papers, and writes the package's table:
    python -m bench.generic_words [--write]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from bench.common import load_eval
from digest.rank.index import build_index
from digest.rank.weak import BACKGROUND_FILE, GENERIC_SHARE, NAMED_PREFIX, NAMED_SHARE, phrase_share


def main() -> None:
    docs, _ = load_eval()
    index = build_index(docs)
    share = np.diff(index.weights.indptr) / len(index)
    inv = {c: t for t, c in index.vocab.items()}
    cols = np.flatnonzero(share >= GENERIC_SHARE)
    terms = sorted((inv[int(c)] for c in cols if " " not in inv[int(c)]), key=lambda t: t)
    print(f"{len(index)} papers; {len(terms)} single-word terms in >= {GENERIC_SHARE:.0%} of them")
    print("| term | share of papers |\n|---|---|")
    for t in sorted(terms, key=lambda t: -share[index.vocab[t]]):
        print(f"| {t} | {share[index.vocab[t]]:.3f} |")
    generic = set(terms)
    phrases = sorted(
        (t for t in index.vocab if " " in t and all(w in generic for w in t.split())),
        key=lambda t: -share[index.vocab[t]],
    )
    named = sorted(t for t in phrases if phrase_share(index, t) >= NAMED_SHARE)
    print("\n| phrase of generic words | share of papers | share of its rarer word's papers |")
    print("|---|---|---|")
    for t in (t for t in phrases if share[index.vocab[t]] >= 0.03):
        print(f"| {t} | {share[index.vocab[t]]:.3f} | {phrase_share(index, t):.2f} |")
    print(f"named phrases (rarer word's share >= {NAMED_SHARE}): {', '.join(named)}")
    if "--write" in sys.argv:
        Path(BACKGROUND_FILE).write_text(
            "# Generic words of research papers (python -m bench.generic_words --write)\n"
            + "\n".join(terms)
            + "\n# Phrases of generic words that name a topic\n"
            + "".join(f"{NAMED_PREFIX}{t}\n" for t in named)
        )
        print(f"wrote {BACKGROUND_FILE}")


if __name__ == "__main__":
    main()
