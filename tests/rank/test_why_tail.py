"""A why-line's title tail ('; on …') is a phrase of the title, never one word ("on till",
"on waxing" read as fragments).

On the bundled papers, every search page of a handful of topics: each tail has two words or
more, and each stands in its paper's title as written; most lines keep a tail.

Breaks that turn this red: `why._best` returning its best single word again (tails such as
"; on tcell"); extending a word by a neighbour that is not beside it in the title (the tail is not
in the title); dropping every tail (no line keeps one).
"""

from __future__ import annotations

import re

import pytest

from digest import BUNDLED_PAPERS
from digest.ingest.parse import parse_neurips_list
from digest.rank.index import DocInput, build_index
from digest.rank.ranker import Ranker

TOPICS = (
    "alignment",
    "sparse autoencoders",
    "unlearning",
    "adversarial examples",
    "test-time compute",
    "language models",
    "defense",
    "fine-tuning",
)


@pytest.fixture(scope="module")
def ranker():
    recs = parse_neurips_list(BUNDLED_PAPERS.read_text(encoding="utf-8")).records
    return Ranker(build_index([DocInput(r.id, r.title, r.abstract) for r in recs]))


def test_title_tails_are_phrases_of_the_title(ranker):
    ix = ranker.index
    tails = 0
    lines = 0
    for topic in TOPICS:
        for hit in ranker.search(topic, per_page=20, min_score=0.0).hits:
            lines += 1
            if "; on " not in hit.why:
                continue
            tails += 1
            tail = hit.why.split("; on ", 1)[1]
            assert len(tail.split()) >= 2, hit.why
            title = " ".join(re.findall(r"[^\W_]+", ix.titles[ix.pos[hit.paper_id]].lower()))
            assert f" {tail} " in f" {title} ", (tail, title)
    assert lines >= 20 and tails >= lines / 2, (tails, lines)
