"""The `digest` command's steps: which channel and day, the preview, and what a run printed."""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import TYPE_CHECKING

from digest.clock.times import local_day
from digest.errors import DigestError
from digest.models import Channel, ChannelRef, Paper

if TYPE_CHECKING:
    from bot.app import App
    from bot.runtime.outcome import Outcome


def parse_day(text: str | None, tz: str, now: datetime) -> date:
    if text is None:
        return local_day(now, tz)
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise DigestError(f"--date must look like 2026-12-01, got {text[:20]!r}.") from None


def digest_day(
    application: App,
    ref: ChannelRef,
    day: str | None,
    now: datetime,
    dry_run: bool,
    connected: set[str],
) -> tuple[Channel, date]:
    """The channel and day `digest` acts on; a DigestError (one line) when there is none."""
    from digest.delivery.due import refuse_day

    if day is not None:
        parse_day(day, "UTC", now)  # a malformed --date is said before anything about the channel
    ch = application.channels.find(ref)  # a digest needs a channel someone set up
    if ref.platform not in connected and not dry_run:  # only then: no connection is the problem
        raise DigestError(_no_connection(ref.platform))
    when = parse_day(day, ch.timezone, now)
    if application.channels.follows_nothing(ch, None if dry_run else when):
        # no digest to post or preview, not an empty one (a delivered day still says so)
        raise DigestError(
            f'{ref} follows nothing, so it gets no digest; `digestbot subscribe {ref} "a topic"` first.'
        )
    refused = refuse_day(ch, when, now, application.channels.catchup_grace)
    if refused and not dry_run:
        raise DigestError(refused)
    return ch, when


def print_run(
    application: App, ref: ChannelRef, ch: Channel, when: date, outcome: Outcome, as_json: bool
) -> int:
    """Print what a `digest` run did (a line, or JSON with the papers posted); its exit code."""
    from bot.runtime.runner import BUSY

    code = digest_exit_code(outcome)
    if code == 2:  # not sent (paused, say): one error line, like any digest that cannot be had
        resume = f'; `digestbot cmd {ref} "/papers resume"` resumes it' if ch.paused else ""
        raise DigestError(f"{ref} {when}: not sent: {outcome}{resume}")
    if code == 3 and not outcome.startswith(BUSY):  # e.g. a state read as the other one finished
        outcome = f"{BUSY} ({outcome}); `digestbot channels` shows when it is done"
    if not as_json:
        print(f"{ref} {when}: {outcome}")
        return code
    delivery = application.channels.history.for_day(ch.id, when)
    items = list(delivery.items) if delivery else []
    papers = application.papers.papers_by_id(i.paper_id for i in items)
    rows = [(i.paper_id, papers.get(i.paper_id), i.score, i.why) for i in items]
    print(_digest_json(ref, when, outcome, rows))
    return code


def digest_exit_code(outcome: Outcome) -> int:
    """The exit code of `digestbot digest` for a run's outcome (docs/commands.md, `digest`): 0 settled;
    3 another process holds it (not an error, not settled by us); 1 our own post failed
    (retried later or given up); 2 not sent (paused, follows nothing...)."""
    from bot.runtime.outcome import (
        Kind,  # here: it loads the service layer, which `--help` must not
    )

    codes = {
        Kind.POSTED: 0,
        Kind.SETTLED: 0,
        Kind.BUSY: 3,
        Kind.LOST: 3,
        Kind.RETRYING: 1,
        Kind.FAILED: 1,
        Kind.NOT_SENT: 2,
    }
    return codes[outcome.kind]


def preview(application: App, ch: Channel, day: date, as_json: bool, now: datetime) -> None:
    """`digest --dry-run`: a day's digest; for today, the next one instead (said so) once
    today's has gone out."""
    from bot.adapters.console import render
    from bot.commands.replies import digest_reply

    note = ""
    today = local_day(now, ch.timezone)
    if day == today:
        day, note = application.digests.preview_target(ch, now)
    d = application.digests.preview(ch.ref, day)
    if as_json:
        items = [(i.paper.id, i.paper, i.score, i.why) for i in d.items]
        print(_digest_json(ch.ref, day, f"preview: {note}" if note else "preview", items))
        return
    shown = render(digest_reply(d, upcoming=day > today))
    print(f"{note}\n{shown}" if note else shown)


def _no_connection(platform: str) -> str:
    """Why a platform's channel cannot be posted to from here."""
    need = {
        "slack": "DIGESTBOT_SLACK_BOT_TOKEN (or the OAuth settings)",
        "discord": "DIGESTBOT_DISCORD_TOKEN",
    }
    if platform in need:
        return f"No {platform} connection: set {need[platform]} to post there (or use --dry-run)."
    return f"Unknown platform {platform!r}; channels look like console:lab, slack:T123/C456 or discord:GUILD/CHANNEL."


def _digest_json(
    ref: ChannelRef, when: date, outcome: str, items: list[tuple[str, Paper | None, float, str]]
) -> str:
    """The digest as JSON: each paper's id, title, TL;DR (digest/tldr/extractive.py), score and why."""
    from digest.tldr.extractive import tldr_line

    papers = [
        {
            "id": i,
            "title": p.title if p else "",
            "tldr": tldr_line(p) if p else "",
            "score": s,
            "why": w,
        }
        for i, p, s, w in items
    ]
    return json.dumps(
        {"channel": str(ref), "date": when.isoformat(), "outcome": outcome, "papers": papers},
        ensure_ascii=False,
    )
