"""`why` on a paper the channel follows as `like:` says so, not 'Score 0.00, below the threshold'."""

from bot.commands import Context
from digest.models import ChannelRef, SubscriptionKind
from tests.library.test_library_import import ctx

LAB = ChannelRef("console", "newlab")


def test_why_on_a_followed_paper_says_it_is_followed_not_a_score(app):
    """Break that turns it red: the `like:` check in `outlook` dropped (its score and threshold
    verdict, 'Why: related to your interests', come back)."""
    app.channels.follows.add(LAB, SubscriptionKind.LIKE, "syn-gnn-0", "ann")
    app.channels.follows.add(LAB, SubscriptionKind.TOPIC, "diffusion models", "ann")
    c: Context = ctx(LAB)
    reply = app.commands.handle("why syn-gnn-0", c)
    assert not reply.error, reply.text
    assert reply.text.startswith("This channel follows it as `like:`"), reply.text
    assert "never sent here as news" in reply.text
    assert "Score" not in reply.text and "threshold" not in reply.text and "Why:" not in reply.text
    other = app.commands.handle("why syn-diffusion-1", c).text
    assert other.startswith("Score"), other  # a paper not followed: as before
