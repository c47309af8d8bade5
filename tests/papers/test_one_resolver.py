"""Every id or link a stored paper's id or URLs carry resolves wherever an id is taken: `import`,
`subscribe like:`, `up`/`down`, `why`, `similar`, `paper` (PaperService.paper, the one resolver),
for papers read from a file whose ids are OpenReview ids, or whose links are OpenReview links.

Breaks that turn this red (each tried): find_wanted() without its look-up by id and by link for
an OpenReview id (`import https://openreview.net/forum?id=OZ7aImD4uQ` answers "no title:
OZ7aImD4uQ is not a stored paper", for papers stored before); to_row() not reading the
OpenReview id from a file's links (nothing finds 'row-2' by its link id 'Xy7Qp2LmNo' once the
id is typed bare: only openreview_id knows it);
PaperService.paper() taking only stored ids (`why`, `similar`, `paper`, `up` with a link fail:
"No paper with id …"); the id list's reader refusing a bare id without a digit (`import
NnMEadcdyD`: "No entries found in the pasted text").
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import update

from digest.ingest.parse import parse_jsonl
from digest.store.schema import PaperRow
from tests.conftest import say_as_ann

ROWS = [
    # an OpenReview export saved as JSONL: the id is the forum id
    {
        "id": "OZ7aImD4uQ",
        "title": "Sparse probing of transformer circuits",
        "abstract": "We probe transformer circuits with sparse linear probes and find features.",
        "url": "https://openreview.net/forum?id=OZ7aImD4uQ",
    },
    # a bare OpenReview id with no digit
    {
        "id": "NnMEadcdyD",
        "title": "Graph rewiring for oversquashing",
        "abstract": "Graph neural networks oversquash; rewiring the graph helps message passing.",
        "url": "https://openreview.net/forum?id=NnMEadcdyD",
    },
    # a file's own id, and an OpenReview link that names the paper
    {
        "id": "row-2",
        "title": "Diffusion sampling in few steps",
        "abstract": "Diffusion models sample in few steps with a distilled consistency objective.",
        "url": "https://openreview.net/forum?id=Xy7Qp2LmNo&noteId=abc",
    },
]


@pytest.fixture(params=["fresh", "stored before"])
def stored(app, request):
    """The papers as ingested now, or as stored before their links were read for an OpenReview
    id (openreview_id empty: found by their id or links)."""
    parsed = parse_jsonl("\n".join(json.dumps(r) for r in ROWS))
    assert not [p for p in parsed.problems if not p.warning]
    app.store.papers.upsert(parsed.records)
    if request.param == "stored before":
        with app.store.engine.begin() as conn:
            conn.execute(update(PaperRow).values(openreview_id=None))
    say_as_ann(app, "lab", "subscribe diffusion models")
    return app


NAMES = {
    "OZ7aImD4uQ": ["https://openreview.net/forum?id=OZ7aImD4uQ", "OZ7aImD4uQ"],
    "NnMEadcdyD": ["NnMEadcdyD", "<https://openreview.net/pdf?id=NnMEadcdyD>"],
    "row-2": ["https://openreview.net/forum?id=Xy7Qp2LmNo", "Xy7Qp2LmNo"],
}
CASES = [(pid, name) for pid, names in NAMES.items() for name in names]


@pytest.mark.parametrize(("pid", "name"), CASES)
def test_every_command_that_takes_an_id_resolves_it(stored, pid, name):
    app = stored
    title = app.papers.paper(pid).title
    shown = say_as_ann(app, "lab", f"paper {name}")
    assert not shown.error and shown.title == title, shown
    for cmd in ("why", "similar"):
        reply = say_as_ann(app, "lab", f"{cmd} {name}")
        assert not reply.error, (cmd, reply.text)
    voted = say_as_ann(app, "lab", f"up {name}")
    assert not voted.error and title[:30] in voted.text, voted.text
    assert "withdrawn" not in say_as_ann(app, "lab", f"down {name}").text
    liked = say_as_ann(app, "other", f"subscribe like:{name}")
    assert not liked.error and title[:30] in liked.text, liked.text
    imported = say_as_ann(app, "third", f"import {name}").text
    assert "1 matched a stored paper; added 1" in imported, imported
    assert app.papers.paper(name).id == pid


def test_a_word_is_still_no_id(stored):
    """Bare ids are told from words: 'Transformers' and 'hello' stay unreadable in a list."""
    text = say_as_ann(stored, "lab", "import NnMEadcdyD Transformers hello").text
    assert "added 1" in text and "'Transformers' is not a paper id" in text, text
    assert say_as_ann(stored, "lab", "paper NoSuchPaper1").error
