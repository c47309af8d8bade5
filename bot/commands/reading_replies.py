"""The reading group's wording: its posts (poll, announcement, thread, reminder, recap) and the
answers of `/papers reading-group`, as neutral replies every adapter renders its own way."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bot.commands.replies import Action, Card, Reply, card, link_actions
from digest.models import ChannelRef, DeliveryKind
from digest.reading.schedule import POLL_CLOSES, POLL_OPENS, RECAP_AFTER, REMINDER
from digest.reading.service import NO_VOTES, TIE, Candidate, GroupState, Read, ReadingPost
from digest.text.numbers import plural

#: The poll's buttons: their value is '<poll id> <paper id>' (the poll they were shown on).
VOTE = "rg_vote"
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
TIMELINE = (
    f"the poll opens {POLL_OPENS.days} days before the meeting and closes {POLL_CLOSES.days} day "
    "before it, when the pick is announced and its thread opened; a reminder goes to the thread "
    f"{int(REMINDER.total_seconds() // 3600)} hour before, the recap "
    f"{int(RECAP_AFTER.total_seconds() // 3600)} hours after the start"
)


def when(at: datetime, tz: str) -> str:
    """'Tue 8 Dec 15:00 Europe/Berlin'."""
    local = at.astimezone(ZoneInfo(tz))
    return f"{local:%a} {local.day} {local:%b %H:%M} {tz}"


def thread_link(ref: ChannelRef, message_ref: str) -> str:
    """Where the pick's discussion is: a link to the announcement's thread (Slack's permalink
    form, Discord's thread, whose id is its starter message's), or its reference elsewhere."""
    channel, _, msg = message_ref.partition(":")
    if ref.platform == "slack" and msg:
        return f"https://slack.com/archives/{channel}/p{msg.replace('.', '')}"
    if ref.platform == "discord" and msg:
        return f"https://discord.com/channels/{ref.workspace}/{msg}"
    return f"the thread under {message_ref}"


def _why(c: Candidate) -> str:
    if c.nominated_by:
        return f"nominated by @{c.nominated_by}"
    return f"👍 ×{c.thumbs} this week" if c.thumbs else "👍'd this week"


def _candidate(post: ReadingPost, n: int, c: Candidate) -> Card:
    base = card(c.paper, why=_why(c), rank=n)
    vote = Action(VOTE, "🗳 Vote for this", f"{post.poll.id} {c.paper.id}")
    return Card(**{**base.__dict__, "actions": (vote, *link_actions(c.paper))})


def reading_reply(post: ReadingPost) -> Reply:
    """A reading-group post as a public message (the runner posts it through the ledger)."""
    tz = post.channel.timezone if post.poll is None else _zone(post)
    meeting = when(post.timeline.meeting, tz)
    title_of = post.pick.title if post.pick else ""
    if post.kind == DeliveryKind.RG_POLL:
        if not post.candidates:
            return Reply(
                title="📚 Reading group: no candidates this week",
                text=f"Nobody nominated a paper or 👍'd one this week, so there is no poll and no "
                f"pick for the meeting on {meeting}. `/papers nominate <id>` puts a paper on "
                "next week's poll.",
                ephemeral=False,
            )
        return Reply(
            title=f"📚 Reading group poll for {meeting}",
            text=f"Vote for the paper to read: one vote each, a second vote moves yours. The poll "
            f"closes {when(post.poll.closes_at, tz)}; the most votes win, a tie goes to the paper "
            "listed first (nominated earliest, then most 👍).",
            cards=tuple(_candidate(post, n, c) for n, c in enumerate(post.candidates, 1)),
            ephemeral=False,
        )
    if post.kind == DeliveryKind.RG_PICK:
        if post.pick is None:  # closed with no votes
            return Reply(
                title="📚 Reading group: no pick this week",
                text=f"Nobody voted, so there is no pick for the meeting on {meeting}. "
                "Nominated papers stay on next week's poll.",
                ephemeral=False,
            )
        votes = post.counts.get(post.pick.id, 0)
        how = f"{plural(votes, 'vote')} of {len(post.voters)}"
        if post.poll.outcome == TIE:
            others = ", ".join(p.title for p in post.tied if p.id != post.pick.id)
            how += (
                f"; tied with {others}: the tie goes to the paper listed first on the poll "
                "(nominated earliest, then most 👍)"
            )
        return Reply(
            title=f"📚 Reading group pick for {meeting}",
            text=f"We read *{title_of}* ({how}). Discussion in this message's thread.",
            cards=(card(post.pick),),
            ephemeral=False,
        )
    return _in_thread(post, meeting, tz)


def _in_thread(post: ReadingPost, meeting: str, tz: str) -> Reply:
    """The posts under the announcement: the thread's opening line, the reminder, the recap."""
    pick = post.pick
    assert pick is not None  # only a pick has a thread
    if post.kind == DeliveryKind.RG_THREAD:
        text = f"Discussion thread for *{pick.title}*: questions and notes here before the meeting on {meeting}."
    elif post.kind == DeliveryKind.RG_REMIND:
        text = f"⏰ Reading group in one hour ({meeting}): *{pick.title}*."
    else:
        who = ", ".join(f"@{v}" for v in post.voters) or "nobody"
        link = thread_link(post.channel.ref, post.reply_to or "")
        text = (
            f"Recap of the meeting on {meeting}: we read *{pick.title}*. "
            f"Voted ({len(post.voters)}): {who}. Thread: {link}"
        )
    return Reply(title=pick.title, text=text, ephemeral=False, reply_to=post.reply_to)


def _zone(post: ReadingPost) -> str:
    tzinfo = post.timeline.meeting.tzinfo
    key = getattr(tzinfo, "key", None)
    return key or post.channel.timezone


def state_reply(s: GroupState) -> Reply:
    """`reading-group`: on (when, the next meeting, this week's poll) or off."""
    if s.group is None or not s.group.active or s.timeline is None:
        return Reply(
            title="Reading group: off",
            text="This channel has no reading group. `/papers reading-group on <weekday> <HH:MM> "
            "[timezone]` starts one: each week the bot polls for a paper, announces the pick "
            "with a discussion thread, reminds and recaps.",
        )
    g, tl = s.group, s.timeline
    lines = [
        f"Meets every {WEEKDAYS[g.weekday]} at {g.at} {g.timezone}; next: {when(tl.meeting, g.timezone)}.",
        f"Timeline: {TIMELINE}.",
    ]
    if s.skipped:
        lines.append(f"This week's poll was not posted: {s.skipped}.")
    elif s.poll is None:
        lines.append(f"The poll opens {when(tl.opens, g.timezone)}.")
    elif s.poll.pick:
        lines.append(f"This week's pick: {s.poll.pick}.")
    elif s.poll.outcome == NO_VOTES:
        lines.append("This week's poll closed with no votes: no pick.")
    elif not s.poll.candidates:
        lines.append("This week's poll had no candidates.")
    else:
        lines.append(
            f"Poll open until {when(s.poll.closes_at, g.timezone)}: "
            f"{plural(len(s.poll.candidates), 'candidate')}, {plural(s.votes, 'vote')}."
        )
    lines.append(f"{plural(s.nominations, 'nominated paper')} waiting (`/papers nominate <id>`).")
    return Reply(title="Reading group: on", text="\n".join(lines))


def history_reply(reads: list[Read], tz: str) -> Reply:
    """`reading-group history`: the papers read, newest first."""
    if not reads:
        return Reply(title="Reading group history", text="The group has not picked a paper yet.")
    lines = [
        f"{when(r.meeting, tz)}: {r.paper.title} ({r.paper.id}; {plural(r.votes, 'vote')} of "
        f"{r.voters}{', won a tie' if r.outcome == TIE else ''})"
        for r in reads
    ]
    lines.append("`/papers reading-group export` gives them as BibTeX.")
    return Reply(title="Reading group history", text="\n".join(lines))
