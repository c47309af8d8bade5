"""`/papers top`: what colleagues liked across the workspace's channels the asker can see."""

from __future__ import annotations

from datetime import timedelta

from bot.commands.core import Args, Commands, Context, command
from bot.commands.replies import Reply, card, error, liked_in
from digest.channels.colleagues import PERIODS, top_liked
from digest.text.numbers import plural


def _people(n: int) -> str:
    return "1 person" if n == 1 else f"{n} people"


@command(
    "top",
    "top [week|month]",
    "the papers with most 👍 across this workspace's channels you can see",
)
def top_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    period = args.words[0].lower() if args.words else "week"
    if period not in PERIODS or len(args.words) > 1:
        return error("Use `/papers top week` or `/papers top month`.")
    since = ctx.now - timedelta(days=PERIODS[period])
    liked, counted = top_liked(cmds.channels, ctx.ref, ctx.visible, since, everyone=ctx.shared)
    who = "everyone here can see" if ctx.shared else "you can see"
    where = f"across {plural(counted, 'channel')} {who}"
    if not liked:
        return Reply(text=f"No 👍 in the last {period} {where} yet.", title="👍 Top papers")
    cards = tuple(
        card(x.paper, f"{_people(x.people)} · {liked_in(x.channels)}", rank)
        for rank, x in enumerate(liked, 1)
    )
    return Reply(
        text=f"The papers most people 👍'd in the last {period}, {where} (each person counted "
        "once; a channel keeps out with `/papers option share-votes off`).",
        title="👍 Top papers",
        cards=cards,
    )
