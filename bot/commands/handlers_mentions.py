"""`/papers me mention on|off`: be mentioned on a channel's picks that fit your own digest."""

from __future__ import annotations

from bot.commands.core import Args, Commands, Context, command
from bot.commands.replies import Reply, error
from digest.mentions.service import NOT_HERE

USAGE = "Use `/papers me mention on` or `off` in the channel, or `/papers me mention` to see which."
ON = (
    "You will be mentioned (→ @you) on this channel's digest pick that best fits your personal "
    "digest, above your own threshold, at most once a digest, from the next digest composed. "
    "The mention shows only that the paper fits you, never what you follow. "
    "`/papers me mention off` stops it."
)
ALREADY = "You are already mentioned here on picks that fit your personal digest."
OFF = (
    "You will not be mentioned here any more: mentions are fixed when a digest is composed, so "
    "the next digest composed has none (one composed before, still being sent, keeps its)."
)
WAS_OFF = "You were not mentioned here; nothing changed."
STATE_ON = "You are mentioned here on picks that fit your personal digest; `/papers me mention off` stops it."
STATE_OFF = "You are not mentioned here; `/papers me mention on` turns it on."


@command(
    "mention",
    "mention [on|off]",
    "(also as `me mention …`; typed in the channel) be mentioned (→ @you) on this channel's "
    "pick that best fits your personal digest, once a digest; `off` stops it",
    private=True,
)
def mention_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    # `me mention` acts on the channel it was typed in; plain `mention` on this one. Either
    # way the person's own digest decides what fits them; a DM with the app has no channel.
    where, own = (ctx.typed_in, ctx.ref) if ctx.personal else (ctx.ref, ctx.dm)
    if where is None or where.personal:
        return error(NOT_HERE)
    if own is None:
        return error("Personal digests are not available here, so there is nothing to fit.")
    word = args.words[0].lower() if args.words else ""
    if len(args.words) > 1 or word not in ("", "on", "off"):
        return error(USAGE)
    channel = cmds.channels.lookup.get(where)
    if word == "on":
        new = cmds.mentions.turn_on(channel, ctx.user, cmds.channels.lookup.get(own))
        return Reply(text=ON if new else ALREADY, title="Mentions")
    if word == "off":
        gone = cmds.mentions.turn_off(channel, ctx.user)
        return Reply(text=OFF if gone else WAS_OFF, title="Mentions")
    on = cmds.mentions.is_on(channel, ctx.user)
    return Reply(text=STATE_ON if on else STATE_OFF, title="Mentions")


def mention_note(cmds: Commands, ctx: Context, paper_id: str) -> str:
    """`why`'s line for the person a pick here mentioned, said only to them, privately; ''
    for anyone else, and for an answer shared in the channel (`--public`)."""
    if ctx.personal or ctx.shared or ctx.ref.personal:
        return ""
    channel = cmds.channels.lookup.get(ctx.ref)
    if channel is None:
        return ""
    personal = cmds.channels.lookup.get(ctx.dm) if ctx.dm is not None else None
    fit = cmds.mentions.explain(channel, ctx.user, paper_id, personal)
    if fit is None:
        return ""
    reason = fit.why.rstrip().rstrip(".")
    why = f" Your digest's reason: {reason}." if reason else ""
    return (
        f"\nYou were mentioned on this pick: it fits your personal digest (score {fit.score:.2f}, "
        f"your threshold {fit.threshold:.2f}).{why} Only you see this line."
    )
