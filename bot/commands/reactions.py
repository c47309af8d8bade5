"""👍/👎 reactions on digest messages, for every platform: a vote on a one-paper message, a
private "which paper?" on a message showing several."""

from __future__ import annotations

from bot.commands.core import Commands
from bot.commands.replies import Action, Card, Reply, card, link_actions
from digest.models import Channel, Paper


def reaction(cmds: Commands, platform: str, user: str, refs: list[str], value: int) -> Reply | None:
    """A reaction (``value`` 1 👍, -1 👎, 0 removed) on the message known by any of ``refs``
    (blocking: run it in a thread).

    On a message showing one paper it is the vote, and nothing is said (None). On a message
    showing several, nothing is recorded: the reply, for the reacting person alone, asks which
    paper was meant, with one button per paper that votes on the digest the message came from.
    A removed reaction there changes nothing (it named no paper either); other messages: None.
    """
    for ref in refs:
        if cmds.channels.react(platform, user, ref, value) is not None:
            return None
    if value == 0:
        return None
    for ref in refs:
        if (found := cmds.channels.message_papers(platform, ref)) is not None:
            return which_paper(*found, value)
    return None


def which_paper(channel: Channel, papers: list[Paper], value: int) -> Reply:
    """Ask which of a message's papers a reaction meant; each button votes in ``channel``
    (its value is '<paper id> <channel id>', as for a card shown away from its digest)."""
    mark, kind = ("👍", "up") if value > 0 else ("👎", "down")

    def choice(p: Paper) -> Card:
        button = Action(kind, f"{mark} this one", f"{p.id} {channel.id}")
        base = card(p)
        return Card(
            p.id,
            base.title,
            base.url,
            base.authors,
            base.venue,
            "",
            actions=(button, *link_actions(p)),
        )

    return Reply(
        text=f"Your {mark} reaction is on a message showing {len(papers)} papers, so it counted "
        "for none of them: which one did you mean? (The buttons under each paper vote too.)",
        title="Which paper?",
        cards=tuple(choice(p) for p in papers),
    )
