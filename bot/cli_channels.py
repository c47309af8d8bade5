"""`digestbot` commands for channels and the bot itself: run, subscribe, digest, feedback, cmd, channels."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Annotated

import typer

from bot.cli import DbOption, app, err, out, wired
from digest.errors import DigestError
from digest.models import Channel, ChannelRef, SubscriptionKind
from digest.schedule import local_day

if TYPE_CHECKING:
    from bot.app import App
    from bot.commands import Context
    from bot.commands.replies import Reply
    from bot.outcome import Outcome

DEMO_CHANNEL = ChannelRef("console", "lab")
DEMO_TOPICS = ("sparse autoencoders", "LLM alignment", "reinforcement learning")
#: Who types at `digestbot run`'s console prompt; `cmd` on a console channel is the same person,
#: so `/papers me …` reaches one personal digest (console:@you) from both.
CONSOLE_USER = "you"


#: The platforms digestbot can deliver to; a channel anywhere else would never get a digest.
PLATFORMS = ("console", "slack", "discord")


#: Per platform: (workspace id, channel id, what to say). A personal digest's id is ``@<user>``.
ID_RULES = {
    "slack": (r"[A-Z][A-Z0-9]{0,30}", r"@?[A-Z][A-Z0-9]{0,30}",
              "Slack ids are uppercase letters and digits, e.g. slack:T123/C456"),
    "discord": (r"[0-9]{1,20}", r"@?[0-9]{1,20}",
                "Discord ids are numbers (snowflakes), e.g. discord:81384788765712384/81384788765712385"),
    "console": (r"", r"[^\s:\x00-\x1f\x7f\ud800-\udfff]{1,64}", "console channels are a name of at most 64 characters without spaces, e.g. console:lab"),
}  # fmt: skip


def _ref(text: str) -> ChannelRef:
    ref = ChannelRef.parse(text)
    if ref.platform not in PLATFORMS:
        raise DigestError(
            f"Unknown platform {ref.platform[:20]!r}: channels are {', '.join(PLATFORMS)}."
        )
    workspace, channel, rule = ID_RULES[ref.platform]
    # ids end up in `channels` output, logs and API calls: a space or a 5000-char id breaks them
    if not (re.fullmatch(workspace, ref.workspace) and re.fullmatch(channel, ref.channel_id)):
        shown = text.strip() if len(text.strip()) <= 60 else text.strip()[:60] + "…"
        raise DigestError(f"Not a valid channel {shown!r}: {rule}.")
    return ref


def _day(text: str | None, tz: str) -> date:
    if text is None:
        return local_day(datetime.now(UTC), tz)
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise DigestError(f"--date must look like 2026-12-01, got {text[:20]!r}.") from None


async def apply_reply(application: App, runner, reply: Reply, ctx: Context) -> str:
    """Render a reply and carry out what it asks of the runner (post a digest now)."""
    from bot.adapters.console import render

    text = render(reply)
    if reply.deliver_now is not None:
        channel = application.channels.channel(reply.deliver_now)
        outcome = await runner.run_now(reply.deliver_now, local_day(ctx.now, channel.timezone))
        text += f"\n({outcome})"
    return text


@app.command("cmd")
def cmd_cmd(
    channel: str,
    text: str,
    user: Annotated[
        str | None,
        typer.Option(
            "--user", help="As this user (default: the console's user on console:, else cli)."
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Run a chat command exactly as a platform would, e.g. `digestbot cmd console:lab "/papers help"`."""
    from bot.commands import Context
    from bot.commands.core import NO_PERSONAL
    from digest.channels import no_channel

    application = wired(db)
    ref = _ref(channel)
    name = "" if user else "the command line"  # what a pause reason says, e.g. in `channels`
    user = user or (CONSOLE_USER if ref.platform == "console" else "cli")  # `run`'s console user
    ctx = Context(ref, user, dm=ChannelRef(ref.platform, f"@{user}", ref.workspace), name=name)
    target, creates = application.commands.target(text, ctx)
    known = application.store.channels.get(target) is not None
    application.channels.create_missing = known or creates  # reading must not create it
    reply = application.commands.handle(text, ctx)
    if reply.error and reply.text in (no_channel(target), NO_PERSONAL):  # one line, as chat says it
        raise DigestError(NO_PERSONAL if target.channel_id.startswith("@") else no_channel(target))
    runner = application.runner(application.adapters(out.file))
    print(asyncio.run(apply_reply(application, runner, reply, ctx)))
    if reply.error:  # the reply says so itself: printed as chat shows it, but the exit code is 2
        raise typer.Exit(2)


@app.command("subscribe")
def subscribe_cmd(channel: str, topic: str, db: DbOption = None) -> None:
    """Follow a topic in a channel (`author:NAME` and `like:ID` work too)."""
    application = wired(db)
    kind, sep, rest = topic.partition(":")
    kinds = {
        "author": SubscriptionKind.AUTHOR,
        "like": SubscriptionKind.LIKE,
        "exclude": SubscriptionKind.EXCLUDE,
    }
    if sep and kind.lower() in kinds:
        print(application.channels.add(_ref(channel), kinds[kind.lower()], rest, "cli"))
    else:
        print(application.channels.add(_ref(channel), SubscriptionKind.TOPIC, topic, "cli"))


@app.command("feedback")
def feedback_cmd(
    channel: str,
    paper_id: str,
    vote: str,
    user: Annotated[str, typer.Option("--user")] = "cli",
    db: DbOption = None,
) -> None:
    """Record 👍 (`up`) or 👎 (`down`) on a paper for a channel; the same vote again withdraws it."""
    if vote not in ("up", "down"):
        raise DigestError(f"Vote must be up or down, got {vote[:10]!r}.")
    application = wired(db)
    ref = _ref(channel)
    application.channels.find(ref)  # a vote needs a channel someone set up; it creates none
    now = application.channels.vote(ref, user, paper_id, 1 if vote == "up" else -1)
    print({1: "👍 recorded", -1: "👎 recorded", 0: "vote withdrawn"}[now])


@app.command("digest")
def digest_cmd(
    channel: str,
    day: Annotated[
        str | None,
        typer.Option("--date", help="The digest's date, YYYY-MM-DD (default: today there)."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the papers as JSON (id, title, score, why).")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show it without claiming or posting.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Deliver a channel's digest for a date (once), or preview it with --dry-run."""
    from digest.due import refuse_day

    application = wired(db)
    ref = _ref(channel)
    # With --json the console rendering goes to stderr so stdout stays parseable.
    adapters = application.adapters(err.file if as_json else out.file)
    if day is not None:
        _day(day, "UTC")  # a malformed --date is said before anything about the channel
    ch = application.channels.find(ref)  # a digest needs a channel someone set up
    if ref.platform not in adapters and not dry_run:  # only then: no connection is the problem
        raise DigestError(_no_connection(ref.platform))
    when = _day(day, ch.timezone)
    if application.channels.follows_nothing(ch, None if dry_run else when):
        # no digest to post or preview, not an empty one (a delivered day still says so)
        raise DigestError(
            f'{ref} follows nothing, so it gets no digest; `digestbot subscribe {ref} "a topic"` first.'
        )
    refused = refuse_day(ch, when, datetime.now(UTC), application.channels.catchup_grace)
    if refused and not dry_run:
        raise DigestError(refused)
    if dry_run:
        _preview(application, ch, when, as_json)
        return
    from bot.runner import BUSY

    runner = application.runner(adapters)
    outcome = asyncio.run(runner.run_channel(ch.id, when))
    busy = digest_exit_code(outcome)
    if busy == 2:  # not sent (paused, say): one error line, like any digest that cannot be had
        resume = f'; `digestbot cmd {ref} "/papers resume"` resumes it' if ch.paused else ""
        raise DigestError(f"{ref} {when}: not sent: {outcome}{resume}")
    if busy == 3 and not outcome.startswith(BUSY):  # e.g. a state read as the other one finished
        outcome = f"{BUSY} ({outcome}); `digestbot channels` shows when it is done"
    if not as_json:
        print(f"{ref} {when}: {outcome}")
        raise typer.Exit(busy)
    delivery = application.store.deliveries.for_day(ch.id, when)
    items = list(delivery.items) if delivery else []
    titles = application.store.papers.get_many(i.paper_id for i in items)
    rows = [
        (i.paper_id, titles[i.paper_id].title if i.paper_id in titles else "", i.score, i.why)
        for i in items
    ]
    print(_digest_json(ref, when, outcome, rows))
    raise typer.Exit(busy)


def digest_exit_code(outcome: Outcome) -> int:
    """The exit code of `digestbot digest` for a run's outcome (README, `digest`): 0 settled;
    3 another process holds it (not an error, not settled by us); 1 our own post failed
    (retried later or given up); 2 not sent (paused, follows nothing...)."""
    from bot.outcome import Kind  # here: it loads the store, which `--help` must not

    codes = {Kind.POSTED: 0, Kind.SETTLED: 0, Kind.BUSY: 3, Kind.LOST: 3,
             Kind.RETRYING: 1, Kind.FAILED: 1, Kind.NOT_SENT: 2}  # fmt: skip
    return codes[outcome.kind]


def _preview(application: App, ch: Channel, day: date, as_json: bool) -> None:
    """`digest --dry-run`: a day's digest; for today, the next one instead (said so) once
    today's has gone out."""
    from bot.adapters.console import render
    from bot.commands.replies import digest_reply
    from digest.delivery import preview_target

    note, now = "", datetime.now(UTC)
    if day == local_day(now, ch.timezone):
        grace = application.channels.catchup_grace
        day, note = preview_target(application.store, ch, now, grace)
    d = application.channels.preview(ch.ref, day)
    if as_json:
        items = [(i.paper.id, i.paper.title, i.score, i.why) for i in d.items]
        print(_digest_json(ch.ref, day, f"preview: {note}" if note else "preview", items))
        return
    print(f"{note}\n{render(digest_reply(d))}" if note else render(digest_reply(d)))


def _no_connection(platform: str) -> str:
    """Why a platform's channel cannot be posted to from here."""
    need = {
        "slack": "DIGESTBOT_SLACK_BOT_TOKEN (or the OAuth settings)",
        "discord": "DIGESTBOT_DISCORD_TOKEN",
    }
    if platform in need:
        return f"No {platform} connection: set {need[platform]} to post there (or use --dry-run)."
    return f"Unknown platform {platform!r}; channels look like console:lab, slack:T123/C456 or discord:GUILD/CHANNEL."


def _digest_json(ref: ChannelRef, when: date, outcome: str, items: list[tuple]) -> str:
    papers = [{"id": i, "title": t, "score": s, "why": w} for i, t, s, w in items]
    return json.dumps({"channel": str(ref), "date": when.isoformat(), "outcome": outcome, "papers": papers},
                      ensure_ascii=False)  # fmt: skip


@app.command("channels")
def channels_cmd(db: DbOption = None) -> None:
    """Every channel: schedule, next and last digest, paused reason."""
    from digest.delivery import next_digest, today_state
    from digest.due import overdue_note

    application = wired(db)
    now = datetime.now(UTC)
    channels = application.store.channels.all()
    if not channels:
        print(
            'No channels yet; `digestbot subscribe console:lab "a topic"` or `digestbot run` makes one.'
        )
    for ch in channels:
        last = application.store.deliveries.last(ch.id)
        due = next_digest(application.store, ch, now, application.channels.catchup_grace)
        state = (
            f"PAUSED ({ch.pause_state})"
            if ch.paused
            else (f"next {due:%Y-%m-%d %H:%M %Z}{overdue_note(due, now)}" if due else "no days")
        )
        if not ch.paused and application.channels.follows_nothing(ch):  # the digests to come
            state = "no digest: follows nothing"
        last_text = (
            f"last {last.digest_date} ({last.status} {last.posted_at:%Y-%m-%d %H:%M} UTC)"
            if last and last.posted_at
            else "no digest delivered yet"
        ) + f"; today: {today_state(application.store, ch, now)}"
        topics = len(application.store.channels.subscriptions(ch.id))
        print(
            f"{ch.ref}  {ch.digest_time} {ch.timezone} {ch.weekdays}  {topics} subscription{'' if topics == 1 else 's'}  {last_text}  {state}"
        )
