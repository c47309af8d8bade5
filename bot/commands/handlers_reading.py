"""`/papers reading-group …` and `/papers nominate <id>`: a channel's weekly reading group."""

from __future__ import annotations

import re

from bot.commands.core import Args, Commands, Context, command
from bot.commands.reading_replies import TIMELINE, history_reply, state_reply, when
from bot.commands.replies import Reply, error

USAGE = (
    "Use `/papers reading-group on <weekday> <HH:MM> [timezone]`, `off`, `history`, `export`, "
    "or `/papers reading-group` alone to see it."
)
NOT_PERSONAL = "The reading group is a channel's: type this in the channel that meets."


@command(
    "reading-group",
    "reading-group [on <weekday> <HH:MM> [timezone]|off|history|export]",
    "a weekly reading group: a poll of nominated and 👍'd papers, the pick announced with a "
    "discussion thread, a reminder and a recap; alone, shows when it meets",
)
def reading_group_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    if ctx.personal:
        return error(NOT_PERSONAL)
    words = list(args.words)
    what = words[0].lower() if words else ""
    groups = cmds.reading
    if what == "":
        return state_reply(groups.state(ctx.ref))
    if what in ("on", "off") and (refused := cmds.refusal(ctx)) is not None:
        return refused
    if what == "on":
        if len(words) < 3:
            return error(
                "Say when it meets: `/papers reading-group on <weekday> <HH:MM> [timezone]`, "
                "e.g. `on thu 15:00 Europe/Berlin`."
            )
        zone = " ".join(words[3:]) or None
        state = groups.switch_on(ctx.ref, words[1], words[2], zone, ctx.user)
        assert state.group is not None and state.timeline is not None
        return Reply(
            title="Reading group: on",
            text=f"The reading group meets every {state.timeline.meeting:%A} at "
            f"{state.group.at} {state.group.timezone}; next: "
            f"{when(state.timeline.meeting, state.group.timezone)}. Timeline: {TIMELINE}. "
            "`/papers nominate <id>` puts a paper on the poll.",
        )
    if what == "off":
        if not groups.switch_off(ctx.ref):
            return Reply(text="This channel's reading group is already off.")
        return Reply(text="Reading group off: no more polls, announcements or reminders here.")
    if what == "history":
        channel = cmds.channels.lookup.get(ctx.ref)
        tz = channel.timezone if channel else "UTC"
        return history_reply(groups.history(ctx.ref), tz)
    if what == "export":
        bib = groups.bibtex(ctx.ref)
        if not bib:
            return error("The reading group has not picked a paper yet: nothing to export.")
        n = len(re.findall(r"^@\w+\{", bib, re.MULTILINE))
        return Reply(
            text=f"{n} BibTeX {'entry' if n == 1 else 'entries'} of papers the group read attached.",
            attachment=("digestbot-reading-group.bib", bib),
        )
    if what == "vote":
        return _vote(cmds, ctx, words[1:])
    return error(USAGE)


def _vote(cmds: Commands, ctx: Context, words: list[str]) -> Reply:
    """A vote (the poll's buttons send `vote <paper id> <poll id>`)."""
    if not words or len(words) > 2:
        return error("Vote with the poll's buttons, or `/papers reading-group vote <id>`.")
    poll = None
    if len(words) == 2:
        # ASCII digits only ("²".isdigit() is true but int() refuses it), and no more than a
        # poll id can hold: a forged button value must not reach the database as an overflow
        if not (words[1].isascii() and words[1].isdigit()) or int(words[1]) >= 2**31:
            return error("That vote names no poll; use the poll's buttons.")
        poll = int(words[1])
    got = cmds.reading.vote(ctx.ref, ctx.user, words[0], poll)
    moved = " (moved from your earlier vote)" if got.moved else ""
    return Reply(
        text=f"Your vote: {got.paper.title}{moved}. The poll closes "
        f"{when(got.poll.closes_at, 'UTC')}; voting again moves your vote."
    )


@command("nominate", "nominate <id>", "put a paper on the reading group's next poll")
def nominate_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    if ctx.personal:
        return error(NOT_PERSONAL)
    if len(args.words) != 1:
        return error("Nominate one paper: `/papers nominate <id>` (an arXiv id or link works).")
    paper, new = cmds.reading.nominate(ctx.ref, args.words[0], ctx.user)
    if not new:
        return Reply(text=f"{paper.title} is already nominated here.")
    state = cmds.reading.state(ctx.ref)
    note = (
        ""
        if state.group is not None and state.group.active
        else " (This channel has no reading group yet: `/papers reading-group on <weekday> <HH:MM>`.)"
    )
    return Reply(
        text=f"Nominated {paper.title} ({paper.id}) for the next reading-group poll.{note}"
    )
