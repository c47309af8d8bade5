"""What the bot says about one pick agrees wherever it says it, and counts mean what a digest sends.

On the bundled papers (digest/data, 20 machine-learning papers), as a new user tried it (issue
34's outside test: `why` named a different interest than the card; "195 stored papers match it"
for a topic whose preview then had 2):
- every card of a digest names an interest, `/papers why` on that paper names the same one, and
  the digest's footer lists it;
- `subscribe`'s "N stored papers match it" is the number of stored papers `why` calls above the
  channel's threshold (what a digest could send), not every paper holding one of its words;
- no card's why-line ends in a one-word title tail ("; on till").
(`similar` with nothing close: tests/commands/test_similar_nothing_close.py.)

Breaks that turn this red (each tried once, then restored):
- `Ranker._why` crediting the first interest (``labels[0]``) instead of the pick's source: cards
  of the second topic and the liked paper name 'activation', `why` too, but the interests no
  longer cover the digest (the check that each of the three interests is named fails);
- `Subscriptions._coverage_note` counting ``specific_matches`` again (every paper with one of the
  words): the count differs from what `why` puts above the threshold;
- `why._best` allowed to return one word (tails such as "; on tcell");
- `Ranker.rank` giving a pick shown at 0.00 its interest's line again: the card said "like
  *Tcell…*" where `why` said nothing matches (found by this test).
"""

from __future__ import annotations

import re

import pytest

from digest import BUNDLED_PAPERS
from digest.rank.results import NO_MATCH
from tests.conftest import make_app
from tests.conftest import say_as_ann as say

TOPICS = ("activation", "unlearning")


@pytest.fixture(scope="module")
def bundled(tmp_path_factory):
    """The bundled papers, lexical ranking (a first run without the extra)."""
    import os

    before = os.environ.get("DIGESTBOT_SEMANTIC")
    os.environ["DIGESTBOT_SEMANTIC"] = "off"
    folder = tmp_path_factory.mktemp("agree")
    app = make_app(f"sqlite:///{folder / 'a.db'}", folder, records=[])
    app.papers.ingest(str(BUNDLED_PAPERS))
    yield app
    app.close()
    os.environ["DIGESTBOT_SEMANTIC"] = before or "off"


def interest(why: str) -> str:
    """The interest a why-line credits: 'topic:…', 'author:…' or 'like:<title start>'."""
    if m := re.match(r"(?:matches|close in meaning to) '([^']+?)'", why):
        return f"topic:{m.group(1)}"
    if m := re.match(r"by (.+?), whom you follow", why):
        return f"author:{m.group(1)}"
    if m := re.match(r"like \*(.+?)\*", why):
        return f"like:{m.group(1)[:20]}"
    return why


def test_card_why_and_footer_name_the_same_interest(bundled):
    liked = next(p for p in bundled.store.papers.iter_all() if p.title.startswith("Tcell"))
    for topic in TOPICS:
        say(bundled, "agree", f"/papers subscribe {topic}")
    say(bundled, "agree", f"/papers subscribe like:{liked.id}")
    say(bundled, "agree", "/papers threshold 0")
    say(bundled, "agree", "/papers size 10")
    digest = say(bundled, "agree", "/papers digest preview")
    assert len(digest.cards) == 10, digest.text
    footer = digest.footer or ""
    named = set()
    for card in digest.cards:
        said = interest(card.why or "")
        why = say(bundled, "agree", f"/papers why {card.paper_id}").text
        line = why.split("\nWhy: ", 1)[1] if "\nWhy: " in why else ""
        assert interest(line) == said, (card.why, why)
        if card.why == NO_MATCH:  # shown as 0.00 (threshold 0): card and `why` say so alike
            continue
        kind, _, what = said.partition(":")
        assert kind in ("topic", "like"), card.why
        assert (what if kind == "topic" else f"like: {what}") in footer, (said, footer)
        named.add(said)
        tail = (card.why or "").split("; on ", 1)[1] if "; on " in (card.why or "") else None
        assert tail is None or len(tail.split()) >= 2, card.why
    assert {f"topic:{t}" for t in TOPICS} | {f"like:{liked.title[:20]}"} <= named, named


@pytest.mark.parametrize("topic", ["activation", "alignment", "unlearning", "defense"])
def test_match_count_is_what_a_digest_could_send(bundled, topic):
    chan = f"count-{topic.replace(' ', '-')}"
    reply = say(bundled, chan, f"/papers subscribe {topic}").text
    above = 0
    for p in bundled.store.papers.iter_all():
        text = say(bundled, chan, f"/papers why {p.id}").text
        above += "above this channel's threshold" in text
    m = re.search(r"(\d+) stored papers? match(?:es)? it above", reply)
    if above:
        assert m and int(m.group(1)) == above, (reply, above)
    else:
        assert m is None and "none scoring above" in reply, reply
