"""`author:` matches a whole name, never a substring, in digests, searches and subscriptions.

On the bundled papers (digest/data/neurips2026.txt names no authors) with made-up authors: Yu
Zhang on three papers (one stored as "Zhang, Yu"), Chenyu, Chuyu and Jiayu Zhang on one each,
Yang Zhang on one and Jürgen Müller on one.

Breaks that turn this red:
- `profile.author_matches` back to `low in a` (substring): following "Yu Zhang" brings Chenyu,
  Chuyu and Jiayu Zhang's papers "by Yu Zhang, whom you follow" (`test_a_followed_author_is_credited_for_their_papers_only`).
- `Ranker._filter_rows` back to a substring: `search author:` lists the three other Zhangs
  (`test_search_by_author_matches_whole_names`).
- `authors.name_key` without folding accents ("Muller" finds nothing) or reading "Zhang, Yu" as
  written (a stored "Zhang, Yu" is not Yu Zhang; a typed one finds nothing).
- `authors.fits` comparing initials as whole words ("Y. Zhang" fits nobody), or
  `PaperService.one_author` dropped: `subscribe author:Y. Zhang` follows both Yu and Yang Zhang
  silently (`test_an_ambiguous_name_is_refused_with_its_candidates`).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from digest import BUNDLED_PAPERS
from digest.ingest.parse import parse_neurips_list
from tests.conftest import make_app
from tests.conftest import say_as_ann as say

OTHERS = ("Grace Hopper", "Alan Turing")
# Record position -> authors given to it.
AUTHORS = {
    0: ("Yu Zhang", *OTHERS),
    1: (*OTHERS, "Yu Zhang"),
    2: (OTHERS[0], "Zhang, Yu"),
    3: ("Chenyu Zhang", *OTHERS),
    4: ("Chuyu Zhang", *OTHERS),
    5: (OTHERS[0], "Jiayu Zhang"),
    6: ("Yang Zhang", OTHERS[1]),
    7: ("Jürgen Müller", OTHERS[1]),
}


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    """The bundled papers with the authors above, lexical ranking; and the titles by position."""
    import os

    before = os.environ.get("DIGESTBOT_SEMANTIC")
    os.environ["DIGESTBOT_SEMANTIC"] = "off"
    records = parse_neurips_list(BUNDLED_PAPERS.read_text(encoding="utf-8")).records
    records = [replace(r, authors=AUTHORS.get(i, ())) for i, r in enumerate(records)]
    folder = tmp_path_factory.mktemp("names")
    app = make_app(f"sqlite:///{folder / 'a.db'}", folder, records=records)
    yield app, {i: records[i].title for i in AUTHORS}
    app.close()
    os.environ["DIGESTBOT_SEMANTIC"] = before or "off"


def _title(card) -> str:
    return card.title.removeprefix("≈ ")  # the card's mark for a preview


def _titles(reply) -> set[str]:
    return {_title(c) for c in reply.cards}


def test_a_followed_author_is_credited_for_their_papers_only(named):
    app, title = named
    assert (
        "Now following author 'Yu Zhang'"
        in say(app, "yu", "/papers subscribe author:Yu Zhang").text
    )
    digest = say(app, "yu", "/papers digest preview")
    credited = {_title(c) for c in digest.cards if (c.why or "").startswith("by Yu Zhang")}
    assert credited == {title[0], title[1], title[2]}, [(_title(c), c.why) for c in digest.cards]
    assert not _titles(digest) & {title[3], title[4], title[5], title[6]}


@pytest.mark.parametrize(
    ("typed", "wanted"),
    [
        ("Yu Zhang", (0, 1, 2)),
        ("Zhang, Yu", (0, 1, 2)),
        ("YU  ZHANG", (0, 1, 2)),
        ("Muller", (7,)),
        ("J. Müller", (7,)),
        ("Chenyu Zhang", (3,)),
        ("Zhang, Yang", (6,)),
        ("Wei Zhang", ()),
    ],
)
def test_search_by_author_matches_whole_names(named, typed, wanted):
    """Each paper searched by its own title, filtered by ``typed``: found only when it is one of
    the ``wanted`` author's papers."""
    app, title = named
    for i, t in title.items():
        reply = say(app, "s", f'/papers search {t} author:"{typed}"')
        assert "ambiguous" not in reply.text, reply.text  # (none found is an error reply)
        assert (t in _titles(reply)) == (i in wanted), (t, reply.text)


@pytest.mark.parametrize("command", ["/papers subscribe author:", "/papers search models author:"])
def test_an_ambiguous_name_is_refused_with_its_candidates(named, command):
    app, _ = named
    reply = say(app, "amb", f'{command}"Y. Zhang"')
    assert reply.error, reply.text
    assert "ambiguous" in reply.text and "Yu Zhang" in reply.text and "Yang Zhang" in reply.text
    assert "Chenyu" not in reply.text and "Jiayu" not in reply.text
    assert "Yu Zhang" not in say(app, "amb", "/papers list").text  # nothing was followed
    # A surname alone fits every Zhang: ambiguous too, all five named.
    reply = say(app, "amb", f"{command}Zhang")
    assert reply.error and all(
        n in reply.text for n in ("Yu Zhang", "Chenyu Zhang", "Chuyu Zhang", "Jiayu", "Yang")
    ), reply.text
