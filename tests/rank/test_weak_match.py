"""Weak matches on the bundled corpus: a generic word alone is no match, and the reply says why.

Breaks tried (each turns a test red): `Ranker.search` ignoring `MatchCheck.blocked` (12 hits for
'diffusion models' on the word 'models'); `GENERIC_SHARE = 1.0` (every word counts as specific);
the subscribe note falling back to 'N stored papers match it'; the floor back to
`max(3, GENERIC_SHARE * n)` ('sparse', in 3 of the 19 papers, generic: `search sparse quantum`
finds nothing).
"""

from __future__ import annotations

import pytest

from bot.commands import Context
from digest import BUNDLED_PAPERS
from digest.index.embeddings import semantic_available
from digest.models import ChannelRef
from digest.rank.weak import GENERIC_SHARE, check, generic_floor
from tests.conftest import make_app

BUNDLED = BUNDLED_PAPERS
LAB = ChannelRef("console", "lab")


@pytest.fixture(scope="module", params=["off", "auto"])
def bundled(tmp_path_factory, request):
    """The bundled papers, lexical only and (when the extra is installed) with meaning on."""
    import os

    if request.param == "auto" and not semantic_available():
        pytest.skip("semantic extra not installed")
    before = os.environ.get("DIGESTBOT_SEMANTIC")
    os.environ["DIGESTBOT_SEMANTIC"] = request.param
    folder = tmp_path_factory.mktemp("weak")
    app = make_app(f"sqlite:///{folder / 'a.db'}", folder, records=[])
    app.papers.ingest(str(BUNDLED))
    yield app
    app.close()
    os.environ["DIGESTBOT_SEMANTIC"] = before or "off"


def say(app, text: str):
    from datetime import UTC, datetime

    ctx = Context(
        LAB, "ann", True, ChannelRef("console", "@ann"), datetime(2026, 12, 1, tzinfo=UTC)
    )
    return app.commands.handle(text, ctx)


def test_generic_word_alone_is_no_match(bundled):
    reply = say(bundled, "/papers search diffusion models")
    assert "No paper mentions 'diffusion'" in reply.text
    assert not reply.cards
    assert "models" not in check(bundled.papers.ranker().index, "diffusion models").specific


def test_subscribe_says_no_paper_mentions_the_word(bundled):
    reply = say(bundled, "/papers subscribe diffusion models")
    assert "Now following topic 'diffusion models'" in reply.text
    assert "No paper mentions 'diffusion'" in reply.text
    assert "stored papers match it" not in reply.text


def test_weak_reply_suggests_close_terms(bundled):
    typo = say(bundled, "/papers search unlearnin")
    assert "Close terms: unlearning" in typo.text
    unrelated = say(bundled, "/papers search diffusion models")
    assert "Stored papers cover:" in unrelated.text  # nothing spelled alike: the corpus's topics


def test_specific_word_still_matches_and_the_missing_one_is_named(bundled):
    reply = say(bundled, "/papers search unlearning xyzzy")
    assert reply.cards, "a specific word that papers use is a real match"
    assert "No paper mentions 'xyzzy'" in reply.text
    first = reply.cards[0]
    assert "unlearning" in (first.why or "").lower()


def test_a_topical_word_on_a_small_corpus_is_no_generic_word(bundled):
    reply = say(bundled, "/papers search sparse quantum")
    assert "No paper mentions 'quantum'" in reply.text
    assert reply.cards and all("sparse" in (c.why or "").lower() for c in reply.cards)
    assert "sparse" in check(bundled.papers.ranker().index, "sparse quantum").specific


def test_big_corpora_keep_the_share_rule():
    """From 100 papers on a word is generic exactly at GENERIC_SHARE of them, as before."""
    for n in (100, 3218, 100_000):
        assert generic_floor(n) == pytest.approx(GENERIC_SHARE * n)
    assert generic_floor(19) > GENERIC_SHARE * 19 and generic_floor(19) > 3


def test_topics_are_words_people_read_not_stems(bundled):
    import re

    papers = bundled.store.papers.iter_all()
    words = {w for p in papers for w in re.findall(r"[^\W_]+", f"{p.title} {p.abstract}".lower())}
    reply = say(bundled, "/papers topics")
    topics = bundled.papers.ranker().suggested_topics()
    assert topics and "Suggested topics" in (reply.title or "")
    for t in topics:
        for phrase in (t.label, *t.terms):
            for w in phrase.split():
                # every word as papers write it (a plural folded to its singular is fine)
                assert w in words or f"{w}s" in words, (w, phrase)
        assert " / " not in t.label and not {"does", "aims"} & set(t.label.split())


def test_topics_are_mined_once_per_fit_not_once_per_appended_segment(monkeypatch):
    """Breaks that turn this red: a ranker for an index with a segment appended mining the
    topics again (an NMF fit inside a weak search after every refresh during an ingest), or one
    for a refitted index keeping the old fit's topics."""
    import digest.rank.topics as topics_module
    from digest.rank.index import DocInput, apply_segment, build_index, make_segment
    from digest.rank.ranker import Ranker
    from tests.support.corpus import synthetic_records

    docs = [DocInput(r.id, r.title, r.abstract, r.authors) for r in synthetic_records()]
    mined = []
    real = topics_module.suggest
    monkeypatch.setattr(topics_module, "suggest", lambda *a, **k: mined.append(1) or real(*a, **k))
    base = build_index(docs[:-5])
    first = Ranker(base)
    assert first.suggested_topics()
    seg = make_segment(base, docs[-5:])
    assert seg is not None
    appended = Ranker(apply_segment(base, seg))
    appended.carry_from(first)
    assert appended.suggested_topics() == first.suggested_topics() and len(mined) == 1
    refitted = Ranker(build_index(docs))
    refitted.carry_from(appended)
    refitted.suggested_topics()
    assert len(mined) == 2
