"""Why-lines on the development set: do they name words the paper has, and do they tell papers apart?

For the top 10 of every query of both files: the share of named words (after 'matches …:') that
occur in the paper's title or abstract as written, or as the singular of a word written there;
and the share of hits whose why-line is identical to another hit's in the same list:
    python -m bench.why
"""

from __future__ import annotations

import re

from bench.common import load_eval, load_query_files, machine, table
from digest.rank.engine import Ranker
from digest.rank.index import build_index

WORD = re.compile(r"[^\W_]+")


def named_words(why: str) -> list[str]:
    """Words the why-line names as matched or distinctive (the topic quote itself is skipped)."""
    _, _, rest = why.partition("':")
    return WORD.findall(rest.replace("; on ", ", ").lower())


def main() -> None:
    docs, _ = load_eval()
    text = {d.id: set(WORD.findall(f"{d.title} {d.abstract}".lower())) for d in docs}
    ranker = Ranker(build_index(docs))
    rows = []
    for name, queries in load_query_files().items():
        words = found = plural_only = hits = same = 0
        for q in queries:
            result = ranker.search(q["query"], per_page=10)
            whys = [h.why for h in result.hits]
            hits += len(whys)
            same += sum(whys.count(w) > 1 for w in whys)
            for h in result.hits:
                for w in named_words(h.why):
                    words += 1
                    found += w in text[h.paper_id]
                    plural_only += w not in text[h.paper_id] and f"{w}s" in text[h.paper_id]
        rows.append([name, words, found / words, (found + plural_only) / words, same / hits])
    print(table(f"Why-lines, top 10 of every query ({machine()})",
                ["query file", "named words", "occur as written", "as written or as a singular",
                 "hits sharing their why-line"], rows))  # fmt: skip


if __name__ == "__main__":
    main()
