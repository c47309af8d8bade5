"""`/papers similar` says so when nothing stored is close, rather than listing unrelated papers.

On the bundled papers (20 machine-learning papers on unlike subjects) plus one paper about
sourdough baking: before, `similar` on the baking paper, or on the manifold-geometry paper, listed
five papers at likeness 0.15 down to 0.01 with no word that none is close. The two papers on
aligning language models (TCFT and Tcell, 0.38 alike) still find each other, and only each other.

Breaks that turn this red: the floor dropped from `Ranker.similar` (five unrelated cards); the
floor set above what real neighbours score (`profile.CLOSE_LSA` = 0.6: the bundled paper gets
nothing either); `similar_cmd` back to an error reply for an empty list (no "Nothing stored is
close" and an error flag).
"""

from __future__ import annotations

import pytest

from digest import BUNDLED_PAPERS
from digest.ingest.parse import make_record, parse_neurips_list
from tests.conftest import make_app
from tests.conftest import say_as_ann as say

ODD = make_record(
    source="jsonl",
    id="odd-sourdough",
    title="Sourdough starters in alpine bakeries: flour, altitude and the rise of rye loaves",
    abstract=(
        "We visited twelve village bakeries above 1,500 metres and followed how their sourdough "
        "starters behave through a winter. Rye flour, cold proofing rooms and thin air slow the "
        "rise; bakers answer with warmer water, longer kneading and a spoon of honey. We record "
        "crumb, crust colour and sourness of 300 loaves and the bakers' own rules of thumb."
    ),
)


@pytest.fixture(scope="module")
def bakery(tmp_path_factory):
    import os

    before = os.environ.get("DIGESTBOT_SEMANTIC")
    os.environ["DIGESTBOT_SEMANTIC"] = "off"
    records = parse_neurips_list(BUNDLED_PAPERS.read_text(encoding="utf-8")).records
    folder = tmp_path_factory.mktemp("similar")
    app = make_app(f"sqlite:///{folder / 'a.db'}", folder, records=[*records, ODD])
    yield app, records
    app.close()
    os.environ["DIGESTBOT_SEMANTIC"] = before or "off"


@pytest.mark.parametrize("which", ["odd", "manifold"])
def test_nothing_close_is_said(bakery, which):
    app, records = bakery
    paper = ODD if which == "odd" else next(r for r in records if r.title.startswith("Manifold"))
    reply = say(app, "c", f"/papers similar {paper.id}")
    assert not reply.cards, [(c.title, c.score) for c in reply.cards]
    assert not reply.error and reply.text.startswith("Nothing stored is close to this paper")


def test_a_paper_with_a_neighbour_gets_it_alone(bakery):
    app, records = bakery
    tcft = next(r for r in records if r.title.startswith("TCFT"))
    reply = say(app, "c", f"/papers similar {tcft.id}")
    assert not reply.error, reply.text
    assert [c.title.removeprefix("≈ ").split(":")[0] for c in reply.cards] == ["Tcell"], reply.text
