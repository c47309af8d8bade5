"""`/papers` subcommands about a channel: subscriptions, schedule, settings, digests, export, stats."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

from bot.commands.core import Args, Commands, Context, command
from bot.commands.replies import FOLLOWS_NOTHING, Reply, digest_reply, error
from digest.clock.times import local_day, parse_weekdays
from digest.clock.zones import parse_timezone
from digest.delivery.due import overdue_note
from digest.errors import DigestError
from digest.models import Channel, Subscription, SubscriptionKind
from digest.text.characters import has_visible
from digest.text.headline import shorten
from digest.text.numbers import plural

OPTIONS = ("quiet", "admin-only", "threads", "backlog", "weekly", "share-votes")


def subscription_kind(text: str) -> tuple[SubscriptionKind, str]:
    """`author:Name`, `like:ID`, `exclude:term` or a topic (chat and `digestbot subscribe`)."""
    prefix, sep, rest = text.partition(":")
    kinds = {
        "author": SubscriptionKind.AUTHOR,
        "like": SubscriptionKind.LIKE,
        "exclude": SubscriptionKind.EXCLUDE,
    }
    if sep and prefix.lower().strip() in kinds:
        return kinds[prefix.lower().strip()], rest
    return SubscriptionKind.TOPIC, text


def _changed(ctx: Context, text: str) -> Reply:
    return Reply(text=text, schedule_changed=ctx.ref)


@command(
    "subscribe",
    "subscribe <topic> | author:<name> | like:<paper id>",
    "follow a topic, an author or papers like one",
    True,
)
def subscribe_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    if "kind" in args.options:  # typed: the text is the value, whatever it looks like
        kind, text = SubscriptionKind(str(args.options["kind"])), args.raw
    else:
        kind, text = subscription_kind(args.raw)
    return _changed(ctx, cmds.channels.follows.add(ctx.ref, kind, text, ctx.user))


@command("exclude", "exclude <term>", "never post papers that mention a term", True)
def exclude_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    if not has_visible(args.raw):
        return error("Say what to exclude, e.g. `/papers exclude quantum`.")
    return _changed(
        ctx, cmds.channels.follows.add(ctx.ref, SubscriptionKind.EXCLUDE, args.raw, ctx.user)
    )


@command(
    "unsubscribe",
    "unsubscribe <topic | number | all | exclusions>",
    "stop following something (`all`: everything followed; `exclusions`: every exclude)",
    True,
)
def unsubscribe_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    if not args.raw:
        return error("Unsubscribe from what? `/papers list` numbers what this channel follows.")
    return _changed(ctx, cmds.channels.follows.unsubscribe(ctx.ref, args.raw))


@command("list", "list", "what this channel follows, its schedule and settings")
def list_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    channel = cmds.channels.channel(ctx.ref)
    subs = cmds.channels.subscriptions(ctx.ref)
    me = "me " if ctx.personal else ""
    lines = [f"{i}. {_followed(cmds, s)}" for i, s in enumerate(subs, 1)] or [
        f"Nothing yet: `/papers {me}subscribe <topic>`."
    ]
    due = cmds.digests.next_digest(channel, ctx.now)
    state = f"⏸ {channel.pause_state}" if channel.paused else "active"
    lines += [
        "",
        f"Schedule: {channel.digest_time} {channel.timezone} on {channel.weekdays} ({state})",
        _next_line(cmds, channel, due, ctx),
        f"Today's digest: {cmds.digests.today_state(channel, ctx.now)}",
        _settings_line(channel, ctx.personal),
    ]
    who = (
        "Your personal digest"
        if ctx.personal
        else f"Channel #{channel.name}"
        if channel.name
        else f"Channel {channel.ref.channel_id}"
    )
    return Reply(text="\n".join(lines), title=who)


def _followed(cmds: Commands, s: Subscription) -> str:
    """One followed thing as `list` shows it; a `like:` by its paper's title too (an imported
    library's ids alone say nothing)."""
    if s.kind is SubscriptionKind.LIKE and (paper := cmds.papers.find_paper(s.text)):
        return f"like: {shorten(paper.title, 80)} ({s.text})"
    return f"{s.kind.value}: {s.text}"


def _next_line(cmds: Commands, channel: Channel, due: datetime | None, ctx: Context) -> str:
    """When the next digest goes out; none while paused or following nothing (none is sent)."""
    if cmds.channels.follows_nothing(channel):  # today's state is its own line
        return "Next digest: none: follows nothing yet"
    if due and not channel.paused:
        return f"Next digest: {due:%a %d %b %H:%M %Z}{overdue_note(due, ctx.now)}"
    return "Next digest: none scheduled"


def _settings_line(channel: Channel, personal: bool) -> str:
    """Size, threshold and every option `option` can set (admin-only only where it applies)."""
    flags = [("quiet on empty days", channel.quiet_when_empty)]
    if not personal:  # refused on a personal digest, so not shown there
        flags.append(("admins only", channel.admin_only))
    flags += [("threads", channel.threaded), ("backlog", channel.backlog)]
    if channel.weekly is not None:  # the default (on from two interests) goes unsaid
        flags.append(("weekly picture", channel.weekly))
    if not personal:  # refused on a personal digest too: its 👍 are never shared
        flags.append(("share votes", channel.share_votes))
    shown = " · ".join(f"{name}: {'on' if on else 'off'}" for name, on in flags)
    return f"Size {channel.digest_size} · threshold {channel.threshold:.2f} · {shown}"


@command("digest", "digest now|preview", "post today's digest now, or preview it just for you")
def digest_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    mode = args.words[0].lower() if args.words else "preview"
    if mode not in ("now", "preview"):
        return error("Use `/papers digest now` or `/papers digest preview`.")
    channel = cmds.channels.channel(ctx.ref)
    # `now` is today's digest: once it went out, the runner says so (as the CLI's `digest` does)
    today = local_day(ctx.now, channel.timezone) if mode == "now" else None
    if cmds.channels.follows_nothing(channel, today):
        return error(FOLLOWS_NOTHING)
    if mode == "now":  # it uses up the day's digest: the same rule as any other setting
        if (refused := cmds.refusal(ctx)) is not None:
            return refused
        if channel.paused:  # the runner would not post it: say so first, not "Posting…"
            me = "me " if ctx.personal else ""
            return error(
                f"Not posted: this digest is {channel.pause_state}. "
                f"`/papers {me}resume` first, then `/papers {me}digest now`."
            )
        return Reply(text="Posting today's digest…", deliver_now=ctx.ref)
    day, note = cmds.digests.preview_target(channel, ctx.now)
    upcoming = day > local_day(ctx.now, channel.timezone)  # the next digest: today's went out
    reply = digest_reply(cmds.digests.preview(ctx.ref, day), upcoming)
    return replace(reply, text=f"{note}\n{reply.text}") if note else reply


@command(
    "schedule",
    "schedule <HH:MM> [timezone] [daily|weekdays|weekends|mon,wed,fri]",
    "when digests arrive",
    True,
)
def schedule_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    if "time" in args.options:  # typed: time, timezone and days arrive as separate values
        o = args.options
        at, tz, days = str(o["time"]), o.get("timezone"), o.get("days")
    else:
        parsed = _schedule_words(args)
        if isinstance(parsed, Reply):
            return parsed
        at, tz, days = parsed
    ch = cmds.channels.settings.set_schedule(ctx.ref, at, tz, days)
    # What was left out keeps its value: said, so `schedule 02:30 Europe/Berlin` after
    # `schedule 09:30 UTC mon` does not look as if the days had been set to mon just now.
    kept = " and ".join(name for name, given in (("time zone", tz), ("days", days)) if not given)
    note = f" ({kept} unchanged)" if kept else ""
    return _changed(ctx, f"Digests at {ch.digest_time} {ch.timezone} on {ch.weekdays}{note}.")


def _schedule_words(args: Args) -> tuple[str, str | None, str | None] | Reply:
    """`09:00 [Europe/Berlin] [weekdays]` as (time, timezone, days), or an error reply."""
    if not args.words:
        return error("When? e.g. `/papers schedule 09:00 Europe/Berlin weekdays`")
    at, rest = args.words[0], list(args.words[1:])
    if rest and re.fullmatch(r"[ap]\.?m\.?", rest[0], re.I):  # "9 am", "9:30 p.m."
        at = f"{at} {rest.pop(0)}"
    given = [w for w in rest if _is_days(w)]
    if len(given) > 1:  # `daily weekends`, `mon tue`: never read as a time zone 'UTC weekends'
        return error(
            f"One days value only, got {' and '.join(given)}: daily, weekdays, weekends "
            "or a list like mon,wed,fri (commas, no spaces)."
        )
    days = given[0] if given else None
    zone = [w for w in rest if w is not days]
    if days is None and len(zone) == 2 and "/" in zone[0]:
        days = zone.pop()  # "Europe/Berlin someday": the days parser says what is wrong
    if days is None and len(zone) >= 2 and _is_zone(" ".join(zone[:-1])):
        days = zone.pop()  # "UTC funday": a known zone, then bad days; the days parser says so
    if len(zone) > 1 and any("/" in w for w in zone):  # only "New York"-style names have spaces
        return error("Use `/papers schedule 09:00 [Europe/Berlin] [weekdays]`.")
    return at, " ".join(zone) or None, days


def _is_zone(text: str) -> bool:
    """True for a time zone name the zone parser accepts."""
    try:
        parse_timezone(text)
    except DigestError:
        return False
    return True


def _is_days(word: str) -> bool:
    """True for 'daily', 'weekdays', 'mon,wed,fri' and the like (not a time zone)."""
    try:
        parse_weekdays(word)
    except DigestError:
        return False
    return True


@command("size", "size <n>", "papers per digest (1-25)", True)
def size_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    ch = cmds.channels.settings.set_size(ctx.ref, args.raw)
    return Reply(text=f"Digests now hold up to {ch.digest_size} papers.")


@command("threshold", "threshold <0-1>", "how strong a match must be to be posted", True)
def threshold_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    from digest.rank.calibrate import highest

    ch = cmds.channels.settings.set_threshold(ctx.ref, args.raw)
    # As set: 0.6349 is not "0.63", which would read as at or under a top of 0.634.
    level = (
        f"{ch.threshold:.2f}" if round(ch.threshold, 2) == ch.threshold else f"{ch.threshold:.4g}"
    )
    text = f"Papers now need a score of at least {level}."
    top = highest("keyword")
    if top is not None and ch.threshold > top:  # else `threshold 0.7` silences them unsaid
        most = f"{top:.2f}" if f"{top:.2f}" != level else f"{top:.3f}"
        text += (
            f" A topic of up to three words is shown at most {most} (how often such matches"
            " were relevant), so those topics will send nothing here; longer topics score higher."
        )
    return Reply(text=text)


@command("pause", "pause", "stop digests until resumed", True)
def pause_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    cmds.channels.settings.set_paused(ctx.ref, True, f"paused by {ctx.who}")
    return _changed(ctx, "Digests paused. `/papers resume` restarts them.")


@command("resume", "resume", "restart digests", True)
def resume_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    channel = cmds.channels.settings.set_paused(ctx.ref, False)
    # What the scheduler will really send (``now`` is set for every command by the core).
    due = cmds.digests.next_digest(channel, ctx.now) if ctx.now else None
    return _changed(ctx, f"Digests resumed. {_next_line(cmds, channel, due, ctx)}.")


@command(
    "option",
    "option quiet|admin-only|threads|backlog|weekly|share-votes on|off",
    "silence empty days; restrict settings to admins; one thread reply per paper; "
    "fill digests with unsent older papers; a weekly picture of papers and votes; "
    "count this channel's 👍 in the workspace's `top`",
    True,
)
def option_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    if len(args.words) != 2 or args.words[1].lower() not in ("on", "off"):
        name = args.words[0].lower() if args.words else ""
        if name in OPTIONS:  # the option is right, the value is not: say its own on/off
            return error(f"Use `/papers option {name} on` or `/papers option {name} off`.")
        return error("Use `/papers option quiet on` or `/papers option admin-only off`.")
    name, on = args.words[0].lower(), args.words[1].lower() == "on"
    cmds.channels.settings.set_option(ctx.ref, name, on, ctx.user)
    if name == "admin-only" and on:
        return Reply(
            text="Option admin-only is now on: only channel admins and you can change this "
            "digest (`/papers option admin-only off` opens it again)."
        )
    return Reply(text=f"Option {name} is now {args.words[1].lower()}.")


@command("export", "export bibtex [liked|all]", "BibTeX of 👍 papers or of every paper posted here")
def export_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    words = [w.lower() for w in args.words]
    if not words or words[0] != "bibtex" or len(words) > 2:
        return error("Use `/papers export bibtex liked` or `/papers export bibtex all`.")
    which = words[1] if len(words) == 2 else "liked"
    bib = cmds.channels.bibtex(ctx.ref, which)
    if not bib:
        return error("Nothing to export yet." if which == "all" else "No 👍 papers here yet.")
    n = len(re.findall(r"^@\w+\{", bib, re.MULTILINE))  # entries, not every '@' in the text
    return Reply(
        text=f"{n} BibTeX {'entry' if n == 1 else 'entries'} attached.",
        attachment=(f"digestbot-{which}.bib", bib),
    )


@command(
    "stats", "stats", "digests, papers and 👍/👎 so far, per interest, with a picture of 8 weeks"
)
def stats_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    s = cmds.channels.stats(ctx.ref)
    picture = cmds.digests.weekly_picture(ctx.ref, ctx.now) if s.papers or s.up or s.down else None
    lines = [
        f"{plural(s.digests, 'digest')}, {plural(s.papers, 'paper')} posted, {s.up} 👍, {s.down} 👎."
    ]
    lines += [
        f"• {k}: {plural(v, 'paper')}"
        for k, v in sorted(s.per_interest.items(), key=lambda kv: -kv[1])
    ]
    if picture is not None:
        lines.append(f"Picture: {picture.alt}")
    title = "Your stats" if ctx.personal else "Channel stats"
    return Reply(text="\n".join(lines), title=title, image=picture)
