"""`digestbot` commands for channels and the bot itself: run, subscribe, digest, feedback, cmd, channels."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated

import typer

from bot.cli.digest import digest_day, digest_exit_code, preview, print_run
from bot.cli.main import DbOption, app, err, out, wired
from bot.cli.options import CONSOLE_USER, UserOption, _ref, cli_user

__all__ = ["CONSOLE_USER", "DEMO_CHANNEL", "DEMO_TOPICS", "apply_reply", "digest_exit_code"]
from digest.errors import DigestError
from digest.models import ChannelRef
from digest.text.characters import has_surrogates

if TYPE_CHECKING:
    from bot.app import App
    from bot.commands import Context
    from bot.commands.replies import Reply

DEMO_CHANNEL = ChannelRef("console", "lab")
DEMO_TOPICS = ("sparse autoencoders", "LLM alignment", "reinforcement learning")


async def apply_reply(application: App, reply: Reply, ctx: Context) -> str:
    """Carry out a reply at the console (through the one effect executor) and the text to print."""
    from bot.adapters.console import ConsoleOutlet

    # an export goes to a file in the data folder (beside the database and index), path shown
    outlet = ConsoleOutlet(application.settings.resolved_index_dir().parent)
    await application.effects.carry_out(reply, outlet, now=ctx.now)
    return outlet.text


@app.command("cmd")
def cmd_cmd(
    channel: str,
    text: str,
    user: UserOption = None,
    db: DbOption = None,
) -> None:
    """Run a chat command exactly as a platform would, e.g. `digestbot cmd console:lab "/papers help"`."""
    from bot.commands import Context
    from bot.commands.core import NO_CHANNEL, NO_PERSONAL
    from digest.channels.service import no_channel

    application = wired(db, out=out.file)
    ref = _ref(channel)
    name = "" if user else "the command line"  # what a pause reason says, e.g. in `channels`
    user = cli_user(user, ref)
    me = ChannelRef(ref.platform, f"@{user}", ref.workspace)
    public = True if ref.platform == "console" else None  # a console channel hides nobody
    ctx = Context(ref, user, dm=me, now=application.clock(), name=name, visible=None, public=public)
    target, creates = application.commands.target(text, ctx)
    known = application.channels.lookup.get(target) is not None
    application.channels.create_missing = known or creates  # reading must not create it
    from bot.cli.library import handle_console  # `import PATH` reads the file

    reply = handle_console(application.commands, text, ctx)
    if reply.error and reply.text in (no_channel(target), NO_CHANNEL, NO_PERSONAL):  # one line
        raise DigestError(NO_PERSONAL if target.personal else no_channel(target))
    # Only `digest now` posts: the runner (metrics, platform clients) is built for it alone.
    print(asyncio.run(apply_reply(application, reply, ctx)))
    if reply.error:  # the reply says so itself: printed as chat shows it, but the exit code is 2
        raise typer.Exit(2)


@app.command("subscribe")
def subscribe_cmd(channel: str, topic: str, db: DbOption = None) -> None:
    """Follow a topic in a channel (`author:NAME` and `like:ID` work too)."""
    from bot.commands.handlers_channel import subscription_kind

    kind, text = subscription_kind(topic)
    print(wired(db).channels.follows.add(_ref(channel), kind, text, "cli"))


@app.command("feedback")
def feedback_cmd(
    channel: str,
    paper_id: str,
    vote: str,
    user: UserOption = None,
    db: DbOption = None,
) -> None:
    """Record 👍 (`up`) or 👎 (`down`) on a paper for a channel; the same vote again withdraws it."""
    if vote not in ("up", "down"):
        raise DigestError(f"Vote must be up or down, got {vote[:10]!r}.")
    ref = _ref(channel)
    user = cli_user(user, ref)
    if has_surrogates(paper_id):
        raise DigestError("The paper id holds bytes that are not UTF-8; copy it from a digest.")
    application = wired(db)
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
    # With --json the console rendering goes to stderr so stdout stays parseable.
    application = wired(db, out=err.file if as_json else out.file)
    now = application.clock()  # read once: the day posted, refused and previewed is one day
    ref = _ref(channel)
    ch, when = digest_day(application, ref, day, now, dry_run, set(application.adapters))
    if dry_run:
        preview(application, ch, when, as_json, now)
        return
    outcome = asyncio.run(application.runner.run_channel(ch.id, when))
    raise typer.Exit(print_run(application, ref, ch, when, outcome, as_json))


@app.command("channels")
def channels_cmd(db: DbOption = None) -> None:
    """Every channel: schedule, next and last digest, paused reason."""
    from digest.delivery.due import overdue_note

    application = wired(db)
    now = application.clock()
    service = application.channels
    channels = service.lookup.all()
    if not channels:
        print(
            'No channels yet; `digestbot subscribe console:lab "a topic"` or `digestbot run` makes one.'
        )
    for ch in channels:
        last = service.history.last(ch.id)
        due = application.digests.next_digest(ch, now)
        state = (
            f"PAUSED ({ch.pause_state})"
            if ch.paused
            else (f"next {due:%Y-%m-%d %H:%M %Z}{overdue_note(due, now)}" if due else "no days")
        )
        if not ch.paused and service.follows_nothing(ch):  # the digests to come
            state = "no digest: follows nothing"
        if last and last.posted_at:
            last_text = (
                f"last {last.digest_date} ({last.status} {last.posted_at:%Y-%m-%d %H:%M} UTC)"
            )
        elif last and service.partly_delivered(last):  # not "nothing delivered"
            done, planned = service.parts_posted(last)
            how = f"partly delivered: {done} of {planned} messages posted"
            if last.last_error:  # stopped: say so and why (a refusal pauses the channel)
                then = "paused" if ch.paused else "stopped"
                how += f", then {then}: {last.last_error}"
            last_text = f"last {last.digest_date} ({how})"
        else:
            last_text = "no digest delivered yet"
        last_text += f"; today: {application.digests.today_state(ch, now)}"
        topics = len(service.lookup.subscriptions(ch.id))
        print(
            f"{ch.ref}  {ch.digest_time} {ch.timezone} {ch.weekdays}  {topics} subscription{'' if topics == 1 else 's'}  {last_text}  {state}"
        )
