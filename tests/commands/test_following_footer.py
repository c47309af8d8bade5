"""After a library import a digest's footer counts what the channel follows ("Following: 2
topics and 21 papers you like") instead of listing every `like:` title (~1,400 characters);
a channel that follows a few things still sees them named.

Breaks that turn this red (each tried): digest_reply() joining every interest again (the footer
names 21 titles and runs past 1,000 characters); following() without its FOLLOWING_LIKES bound
(four short titles listed); the kinds miscounted (authors or exclusions counted as topics).
"""

from __future__ import annotations

from bot.adapters.console import render
from bot.commands.replies import following
from tests.conftest import say_as_ann


def test_a_library_import_is_summarised_in_the_digest_footer(app):
    ids = [p.id for p in app.papers.papers(40)][:21]
    say_as_ann(app, "lab", "subscribe diffusion models")
    say_as_ann(app, "lab", "subscribe graph neural networks")
    imported = say_as_ann(app, "lab", "import " + " ".join(ids)).text
    assert "added 21" in imported, imported
    preview = say_as_ann(app, "lab", "digest preview")
    assert (
        preview.footer == "Following: 2 topics and 21 papers you like (`/papers list` names them)"
    )
    shown = render(preview)
    assert shown.endswith("Following: 2 topics and 21 papers you like (/papers list names them)")
    assert shown.count("like:") == 0


def test_a_few_interests_are_still_named():
    few = ("diffusion models", "author:Ada Lovelace", "like: Sparse probing")
    assert following(few) == ", ".join(few)
    assert following(()) == "nothing yet"
    many = ("gnn", "author:Ada", "-quantum", *(f"like: Paper {n}" for n in range(4)))
    assert following(many) == (
        "1 topic, 1 author and 4 papers you like, excluding 1 term (`/papers list` names them)"
    )
