"""Followed papers are named by their titles wherever they are shown, never by a raw id alone:
the digest footer, `unsubscribe`'s reply (as `list` already did)."""

from datetime import date

from bot.commands.replies import digest_reply
from digest.library.formats import parse_library
from digest.models import ChannelRef, SubscriptionKind
from digest.text.headline import shorten
from tests.library.test_library_import import ctx

LAB = ChannelRef("console", "newlab")
LONG = (
    "Sparse autoencoders recover monosemantic dictionary features from superposition in large "
    "language model activations"
)


def test_footer_and_unsubscribe_name_a_followed_paper_by_its_title(app):
    """Breaks that turn it red: `interests` without the papers (the footer shows
    'like:library-…'); `compose_digest` reading only the picked papers (no title to show);
    unsubscribe's reply back to the subscription's text ('library-…')."""
    bib = f"@article{{m1, title = {{{LONG}}}, author = {{Lovelace, Ada}}, year = {{2025}}}}"
    report = app.commands.imports.import_library(
        LAB, parse_library(bib.encode(), "mine.bib"), "ann"
    )
    (pid,) = report.liked
    app.channels.follows.add(LAB, SubscriptionKind.TOPIC, "graph neural networks", "ann")
    digest = app.digests.preview(LAB, date(2026, 12, 1))
    footer = digest_reply(digest).footer
    assert f"like: {shorten(LONG, 60)}" in footer, footer
    assert pid not in footer
    reply = app.commands.handle("unsubscribe 1", ctx(LAB))
    assert reply.text == f"Stopped following papers like *{shorten(LONG, 100)}*.", reply.text
    assert pid not in reply.text
