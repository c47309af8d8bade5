"""Replies say what was stored or parsed, not the user's raw input cut anywhere.

Breaks that turn this red: add() back to answering "Already following" with the typed text
('GRAPH neural networks'); size_cmd back to `args.raw or "?"` ("got '?'"); whole_number's
digit-count branch removed (a 20-digit cut echo); the vote replies back to `paper.title[:100]`
(the title cut mid-word, no ellipsis).
"""

from digest.models import Links, PaperRecord
from tests.commands.test_commands import say

LONG = (
    "Sparse autoencoders find interpretable features in language models but are surprisingly "
    "sensitive to initialisation and to the width of the dictionary they learn"
)


def test_already_following_names_the_stored_form(app):
    say(app, "subscribe graph neural networks")
    reply = say(app, "subscribe GRAPH   Neural networks")
    assert reply.text.startswith("Already following topic 'graph neural networks'"), reply.text
    say(app, "exclude Quantum")
    assert "papers that mention 'Quantum'" in say(app, "exclude quantum").text


def test_size_without_a_number_says_it_is_missing(app):
    for text in ("size", "size   ", "threshold"):
        reply = say(app, text)
        assert reply.error and "no number was given" in reply.text and "'?'" not in reply.text


def test_a_huge_size_is_out_of_range_without_a_cut_echo(app):
    reply = say(app, "size " + "9" * 23)
    assert reply.error and "from 1 to 25" in reply.text and "23-digit number" in reply.text
    assert "9" * 20 not in reply.text


def test_vote_confirmations_cut_long_titles_on_a_word_with_an_ellipsis(app):
    app.store.papers.upsert(
        [
            PaperRecord(
                id=f"long-{n}",
                source="jsonl",
                title=f"{LONG} {n}",
                abstract_raw="",
                abstract="sparse autoencoders features",
                authors=("Ada Lovelace",),
                venue="NeurIPS 2026",
                year=2026,
                links=Links(abs=f"https://arxiv.org/abs/2612.0000{n}"),
            )
            for n in (1, 2)
        ]
    )
    for text in ("up long-1", "up long-1", "down long-1"):
        reply = say(app, text).text
        shown = reply.split("'")[1]
        assert shown.endswith("…") and LONG.startswith(shown[:-1]), reply
        assert LONG[len(shown) - 1] == " ", reply  # the cut falls between words
    two = say(app, "up long-1 long-2").text.splitlines()[1:]
    assert all(line.endswith("…'") for line in two), two
