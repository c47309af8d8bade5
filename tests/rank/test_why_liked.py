"""Why-lines of picks a 👍 brought: "like *Title*, which you liked", naming the right paper.

Through the real path (votes stored by ChannelService, the digest composed as delivered), a
channel's why-lines name its own most similar 👍 paper: never one it voted 👎, never one another
channel liked. Breaks tried, each turns a test here red:
- `vote_rows` (or `profile_why`) counting 👎 votes as liked: a 👎 title is named;
- `ChannelService.profile` reading every channel's votes: another channel's 👍 is named;
- `nearest_liked` taking the least similar 👍 (argmin): the named paper is not the closest;
- `nearest_liked` always using LSA: the embeddings' closest 👍 is not named;
- `liked_why` dropping the '; on …' phrase: picks brought by one 👍 read the same;
- `title_ref` cutting mid-word or keeping '*' from a title: the markers no longer pair;
- the Slack / Discord renderers escaping the title markers: no italics, literal asterisks.
"""

from __future__ import annotations

import re
from datetime import date

import numpy as np
import pytest

from bot.adapters.discord.embeds import card_embed
from bot.adapters.slack.blocks import card_blocks
from bot.adapters.slack.limits import block_problems
from bot.commands.replies import Card
from digest.models import ChannelRef, SubscriptionKind
from digest.rank.index import DocInput, build_index
from digest.rank.profile import Profile
from digest.rank.ranker import Ranker
from digest.rank.why import LIKED as LIKE_SIM
from digest.rank.why import title_ref
from tests.support.corpus import synthetic_records

LIKED = re.compile(r"like \*([^*]+)\*, which you liked")
A, B = ChannelRef("console", "A"), ChannelRef("console", "B")
# The 👎 paper is of the liked kind, so picks closer to it than to any 👍 stay in A's digest (the
# check bites there); a 👎 of the other kind makes its words count against that kind's papers.
A_UP, A_DOWN, B_UP = ("syn-gnnhet-1", "syn-gnnhet-2"), "syn-gnnhet-3", "syn-gnnmol-2"


def _channel(app, ref, ups, downs=()):
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "graph neural networks")
    app.channels.settings.set_size(ref, "25")
    app.channels.settings.set_threshold(ref, "0")
    for pid in ups:
        app.channels.vote(ref, "u1", pid, 1)
    for pid in downs:
        app.channels.vote(ref, "u1", pid, -1)


def _closest(index, row, rows):
    sims = index.latent[rows] @ index.latent[row]
    return rows[int(np.argmax(sims))], float(sims.max())


def test_a_channel_names_its_own_closest_liked_paper(app):
    _channel(app, A, A_UP, [A_DOWN])
    _channel(app, B, [B_UP])
    index = app.papers.ranker().index
    row = index.pos
    up, down, other = [row[p] for p in A_UP], row[A_DOWN], row[B_UP]
    named = tested_down = tested_other = 0
    for item in app.digests.preview(A, date(2026, 12, 1)).items:
        r = row[item.paper.id]
        best, sim = _closest(index, r, up)
        # Picks where a wrong paper is closer and close enough to be named: the check bites there.
        tested_down += float(index.latent[down] @ index.latent[r]) > max(sim, LIKE_SIM)
        tested_other += float(index.latent[other] @ index.latent[r]) > max(sim, LIKE_SIM)
        if m := LIKED.search(item.why):
            assert f"*{m.group(1)}*" == title_ref(index.titles[best]), item.why
            named += 1
    assert named >= 3 and tested_down >= 1 and tested_other >= 1
    b_lines = [i.why for i in app.digests.preview(B, date(2026, 12, 1)).items]
    assert any(title_ref(index.titles[other]) in w for w in b_lines)
    assert not any(title_ref(index.titles[u]) in w for w in b_lines for u in up)


def _ranker_with_vectors(dense: bool):
    recs = synthetic_records(per_topic=6)
    docs = [DocInput(r.id, r.title, r.abstract) for r in recs]
    index = build_index(docs)
    if dense:
        # Embeddings that disagree with LSA: the candidate is nearest to the 'far' liked paper.
        rng = np.random.default_rng(1)
        vecs = rng.normal(size=(len(docs), 384)).astype(np.float32)
        vecs[index.pos["syn-gnnmol-3"]] = vecs[index.pos["syn-rl-1"]] + 0.01
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        index.dense, index.has_dense = vecs, np.ones(len(docs), dtype=bool)
    return Ranker(index)


@pytest.mark.parametrize("dense", [False, True])
def test_the_named_paper_is_closest_in_the_embeddings_when_present_else_lsa(dense):
    ranker = _ranker_with_vectors(dense)
    votes = (("syn-gnnmol-0", 1), ("syn-rl-1", 1))
    picks = ranker.rank(Profile(votes=votes), ["syn-gnnmol-3"], threshold=0)
    (hit,) = picks.hits
    want = "syn-rl-1" if dense else "syn-gnnmol-0"
    assert LIKED.search(hit.why).group(0) == (
        f"like {title_ref(ranker.index.titles[ranker.index.pos[want]])}, which you liked"
    )


def test_picks_brought_by_one_liked_paper_read_differently_and_name_their_own_words():
    recs = synthetic_records()
    text = {r.id: f"{r.title} {r.abstract}".lower() for r in recs}
    ranker = Ranker(build_index([DocInput(r.id, r.title, r.abstract) for r in recs]))
    cands = [r.id for r in recs if r.id.startswith("syn-gnn-")]
    picks = ranker.rank(Profile(votes=(("syn-gnnhet-1", 1),)), cands, size=5, threshold=0)
    whys = [h.why for h in picks.hits]
    assert len(whys) == 5 and all(LIKED.match(w) for w in whys)
    assert len(set(whys)) >= 4  # the '; on …' phrase tells them apart (without it: 1)
    for h in picks.hits:
        own = h.why.split("; on ", 1)[1]
        assert all(w in text[h.paper_id] for w in own.split()), h.why


def test_long_titles_are_cut_on_a_word_and_render_in_italics_within_limits():
    long = "Scaling *sparse* autoencoders " + "with many interpretable features " * 10
    ref = title_ref(long)
    assert len(ref) <= 62 and ref.endswith("…*") and ref.count("*") == 2
    assert long.replace("*", "").startswith(ref[1:-2].rstrip())  # whole words only
    why = f"matches 'x': y; like {ref}, which you liked"
    card = Card(paper_id="p1", title="T", url=None, authors="", venue="", snippet="s", why=why)
    blocks = card_blocks(card)
    assert not [p for n, b in enumerate(blocks) for p in block_problems(b, n)]
    context = blocks[1]["elements"][0]["text"]
    assert "like _Scaling sparse autoencoders" in context and "…_, which you liked" in context
    field = card_embed(card).to_dict()["fields"][0]["value"]
    assert "like *Scaling sparse autoencoders" in field and "…*, which you liked" in field
    assert "\\*" not in field  # the markers were not escaped into literal asterisks


@pytest.mark.parametrize(
    ("why", "interest"),
    [
        ("matches 'graph neural networks': graph, gnn; on heterophily", "graph neural networks"),
        ("matches 'a: b' (related wording)", "a: b"),
        (
            "close in meaning to 'papers about agents that explore…'",
            "papers about agents that explore…",
        ),
        ("by Ada Lovelace, whom you follow; like *X: a study*, which you liked", "Ada Lovelace"),
        ("like *GraphMatch: matching graphs*, which you liked; on molecules", "your 👍 papers"),
        ("resembles 👍 'Old wording'", "your 👍 papers"),  # stored before this wording
        ("like *GraphMatch: matching graphs*", "papers like GraphMatch: matching graphs"),
    ],
)
def test_stats_credit_each_why_line_to_its_interest(why, interest):
    """Break tried: the old stats rule (split at the first ':', so a title's colon) — red."""
    from digest.rank.why import interest_of

    assert interest_of(why) == interest
