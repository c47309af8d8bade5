"""ReadingGroups: the reading group's use cases over the store, returning data (never wording).

Candidates: papers members nominated and the group has not read (earliest first), then the
week's most 👍'd papers in the channel (most 👍 first, at most ``LIKED``), at most
``CANDIDATES`` in all; fixed when the poll opens (a later nomination waits for next week).

Outcomes when the poll closes (``decide``): the candidate with most votes is picked; a tie goes
to the candidate listed first on the poll (nominated earliest, else most 👍), and the
announcement says so (``tie``); a poll nobody voted in picks nothing (``no-votes``: the
nominations stay for next week); a poll with no candidates picks nothing (``none``: its poll
post said so, and no announcement follows). A paused channel is sent none of it: each post
due while it is paused fails with the pause as its reason (the runner's rule for every
delivery), and what needs an earlier post (the pick needs the poll) is not sent either.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from digest.clock.times import parse_time
from digest.clock.zones import parse_timezone
from digest.errors import DigestError
from digest.models import Channel, ChannelRef, DeliveryKind, DeliveryState, Paper
from digest.reading.schedule import (
    IN_THREAD,
    RECAP_AFTER,
    Timeline,
    meeting_on,
    meetings,
    next_meeting,
    parse_weekday,
)

if TYPE_CHECKING:
    from digest.channels.service import ChannelService
    from digest.store.reading import Group, Poll

#: At most this many candidates on a poll (one button each), and this many of them 👍'd ones.
CANDIDATES = 5
LIKED = 3
#: The 👍 that make a paper one of "the week's": cast in the 7 days before the poll opens.
WEEK = timedelta(days=7)
PICKED, TIE, NO_VOTES, NONE = "picked", "tie", "no-votes", "none"


@dataclass(frozen=True)
class Candidate:
    """A paper on the poll: nominated (by whom) or 👍'd this week (how many 👍)."""

    paper: Paper
    nominated_by: str | None = None
    thumbs: int = 0


@dataclass(frozen=True)
class GroupState:
    """What `reading-group` shows: the meeting, its week, and the poll if one is open."""

    group: Group | None
    timeline: Timeline | None = None
    poll: Poll | None = None
    votes: int = 0
    nominations: int = 0
    skipped: str | None = None  # why this week's poll was not posted (e.g. paused)


@dataclass(frozen=True)
class VoteResult:
    """A vote recorded: the poll, the paper now voted for, and whether it moved a vote."""

    poll: Poll
    paper: Paper
    moved: bool


@dataclass(frozen=True)
class ReadingPost:
    """One reading-group post as data: its kind, the poll and its meeting, the candidates
    (a poll) or the pick (the others), the vote counts, the voters (the recap) and, for a
    post in the pick's thread, the announcement's platform reference."""

    kind: DeliveryKind
    channel: Channel
    poll: Poll
    timeline: Timeline
    candidates: tuple[Candidate, ...] = ()
    pick: Paper | None = None
    tied: tuple[Paper, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    voters: tuple[str, ...] = ()
    reply_to: str | None = None


@dataclass(frozen=True)
class Read:
    """A paper the group read (history and export)."""

    meeting: datetime
    paper: Paper
    votes: int
    voters: int
    outcome: str


def tally(
    candidates: tuple[str, ...], votes: list[tuple[str, str]]
) -> tuple[str, str | None, list[str]]:
    """(outcome, pick, tied) of a poll: most votes wins; a tie goes to the candidate listed
    first; no votes or no candidates pick nothing. Pure."""
    if not candidates:
        return NONE, None, []
    counts = Counter(p for _, p in votes if p in candidates)
    if not counts:
        return NO_VOTES, None, []
    best = max(counts.values())
    top = [c for c in candidates if counts[c] == best]
    return (TIE if len(top) > 1 else PICKED), top[0], (top if len(top) > 1 else [])


class ReadingGroups:
    """A channel's reading group: settings, nominations, polls, votes, posts and history."""

    def __init__(self, channels: ChannelService) -> None:
        self.channels = channels
        self.store = channels.store
        self.clock = channels.clock

    # --- settings -----------------------------------------------------------------------

    def switch_on(
        self, ref: ChannelRef, weekday: str, at: str, zone: str | None, user: str | None
    ) -> GroupState:
        """Meet every ``weekday`` at ``at`` in ``zone`` (default: the channel's digest zone)."""
        day = parse_weekday(weekday)
        hhmm = parse_time(at)
        channel = self.channels.channel(ref)
        tz = parse_timezone(zone) if zone else channel.timezone
        old = self.store.reading.group(channel.id)
        if old is not None and (old.weekday, old.at, old.timezone) != (day, hhmm, tz):
            self._refuse_midweek_change(channel.id, old)
        self.store.reading.set_group(channel.id, day, hhmm, tz, user)
        return self.state(ref)

    def _refuse_midweek_change(self, channel_id: int, old: Group) -> None:
        """A week whose poll is out keeps its meeting until the recap: moving it then would
        drop the poll and its votes (another day) or post the pick, reminder and recap at new
        times naming the old one (another time)."""
        now = self.clock()
        for tl in meetings(now, old.weekday, old.at, old.timezone):
            poll = self.store.reading.poll_for(channel_id, tl.day)
            if poll is not None and now < poll.meeting_at + RECAP_AFTER:
                zone = ZoneInfo(old.timezone)
                meeting = poll.meeting_at.astimezone(zone)
                free = (poll.meeting_at + RECAP_AFTER).astimezone(zone)
                raise DigestError(
                    f"This week's poll is out for the meeting on {meeting:%a %d %b %H:%M} "
                    f"({old.timezone}): change the meeting after it, from {free:%a %H:%M}."
                )

    def switch_off(self, ref: ChannelRef) -> bool:
        """Stop the reading group (False: it was not on)."""
        channel = self.channels.lookup.get(ref)
        return channel is not None and self.store.reading.switch_off(channel.id)

    def state(self, ref: ChannelRef) -> GroupState:
        """The group's settings, its next meeting, and this week's poll."""
        channel = self.channels.lookup.get(ref)
        group = self.store.reading.group(channel.id) if channel else None
        if channel is None or group is None or not group.active:
            return GroupState(group)
        tl = next_meeting(self.clock(), group.weekday, group.at, group.timezone)
        poll = self.store.reading.poll_for(channel.id, tl.day)
        votes = len(self.store.reading.votes(poll.id)) if poll else 0
        noms = len(self.store.reading.nominations(channel.id))
        skipped = None
        if (
            d := self.store.deliveries.for_day(channel.id, tl.day, DeliveryKind.RG_POLL)
        ) is not None and d.status == DeliveryState.FAILED:
            skipped = d.last_error
        return GroupState(group, tl, poll, votes, noms, skipped)

    # --- nominations and votes -----------------------------------------------------------

    def nominate(self, ref: ChannelRef, paper_id: str, user: str) -> tuple[Paper, bool]:
        """Nominate a paper for the channel's next poll; (paper, False) if it already was."""
        paper = self.channels.papers.paper(paper_id)  # a NotFoundError for an unknown id
        channel = self.channels.channel(ref)
        if paper.id in self.store.reading.picks(channel.id):
            raise DigestError(f"The group already read {paper.id}; nominate another paper.")
        return paper, self.store.reading.nominate(channel.id, paper.id, user)

    def vote(self, ref: ChannelRef, user: str, paper_id: str, poll_id: int | None) -> VoteResult:
        """``user``'s vote for ``paper_id`` in poll ``poll_id`` (None: the channel's open
        poll); a second vote moves the first. Refused once the poll has closed."""
        now = self.clock()
        poll = self._poll(ref, poll_id, now)
        if poll.decided or now >= poll.closes_at:
            raise DigestError(
                f"That poll closed at {poll.closes_at:%a %d %b %H:%M} UTC; votes are no longer counted."
            )
        wanted = paper_id.strip()
        found = next((c for c in poll.candidates if c == wanted), None)
        if found is None:  # typed as an arXiv id or link: resolve it, then it must be listed
            try:
                found = self.channels.papers.paper(wanted).id
            except DigestError:
                found = None
        if found not in poll.candidates:
            raise DigestError(
                f"{wanted[:40]!r} is not on this week's poll; the buttons under it vote."
            )
        before = dict(self.store.reading.votes(poll.id)).get(user)
        self.store.reading.vote(poll.id, user, found)
        paper = self.channels.papers.paper(found)
        return VoteResult(poll, paper, moved=before is not None and before != found)

    def _poll(self, ref: ChannelRef, poll_id: int | None, now: datetime) -> Poll:
        channel = self.channels.lookup.get(ref)
        poll = None
        if poll_id is not None:
            poll = self.store.reading.poll(poll_id)
            # a channel the bot has no record of owns no poll: a forged button from anywhere
            # else must not vote in this one
            if poll is None or channel is None or poll.channel_id != channel.id:
                raise DigestError("That poll is not one of this channel's.")
        group = self.store.reading.group(channel.id) if channel else None
        if channel is None or group is None or not group.active:
            # switched off, the group announces nothing: a vote would count for no pick
            raise DigestError("This channel has no reading group; `/papers reading-group on …`.")
        if poll is not None:
            return poll
        for tl in meetings(now, group.weekday, group.at, group.timezone):
            poll = self.store.reading.poll_for(channel.id, tl.day)
            if poll is not None and now < poll.closes_at:
                return poll
        raise DigestError("No reading-group poll is open in this channel now.")

    # --- the week's posts ----------------------------------------------------------------

    def due(
        self, now: datetime, platforms: set[str] | None = None
    ) -> list[tuple[Channel, DeliveryKind, datetime]]:
        """Posts owed now: (channel, kind, meeting) for every active group, each only once its
        earlier post is posted (the pick needs the poll, the thread posts the pick) and not
        yet claimed."""
        out = []
        for group in self.store.reading.active(platforms):
            # pure time arithmetic first: on most days of most weeks nothing is due, and then
            # a group costs no query beyond the one listing the groups
            due = [
                (kind, tl)
                for tl in meetings(now, group.weekday, group.at, group.timezone)
                for kind in tl.due(now)
            ]
            owed = [(k, tl) for k, tl in due if self._owed(group.channel_id, k, tl)]
            if owed and (channel := self.channels.lookup.by_id(group.channel_id)) is not None:
                out += [(channel, kind, tl.meeting) for kind, tl in owed]
        return out

    def _owed(self, channel_id: int, kind: DeliveryKind, tl: Timeline) -> bool:
        deliveries = self.store.deliveries
        if deliveries.for_day(channel_id, tl.day, kind) is not None:
            return False
        if kind == DeliveryKind.RG_POLL:
            return True
        before = DeliveryKind.RG_POLL if kind == DeliveryKind.RG_PICK else DeliveryKind.RG_PICK
        earlier = deliveries.for_day(channel_id, tl.day, before)
        if earlier is None or earlier.status != DeliveryState.POSTED:
            return False
        if kind == DeliveryKind.RG_PICK:
            return True
        poll = self.store.reading.poll_for(channel_id, tl.day)
        return poll is not None and poll.pick is not None

    def post(self, channel: Channel, kind: DeliveryKind, day) -> ReadingPost | None:  # noqa: ANN001 - a date
        """What the post of ``kind`` for the meeting on ``day`` shows (the poll is opened, and
        at the close decided, here: once, whoever asks first); None: nothing to send (no
        candidates, no pick)."""
        group = self.store.reading.group(channel.id)
        if group is None:
            return None
        poll = self.store.reading.poll_for(channel.id, day)
        tl = (
            Timeline(poll.meeting_at.astimezone(ZoneInfo(group.timezone)))
            if poll
            else meeting_on(day, group.at, group.timezone)
        )
        if kind == DeliveryKind.RG_POLL:
            poll = poll or self._open(channel, tl)
            cands = self._described(channel.id, poll.candidates, tl)
            return ReadingPost(kind, channel, poll, tl, candidates=cands)
        if poll is None:
            return None
        if kind == DeliveryKind.RG_PICK:
            poll = self.decide(poll)
            if poll.outcome == NONE:
                return None
        if poll.pick is None and kind != DeliveryKind.RG_PICK:
            return None
        votes = self.store.reading.votes(poll.id)
        papers = self.store.papers.get_many([*poll.candidates])
        post = ReadingPost(
            kind,
            channel,
            poll,
            tl,
            candidates=self._described(channel.id, poll.candidates, tl, papers),
            pick=papers.get(poll.pick) if poll.pick else None,
            tied=tuple(papers[p] for p in poll.tied if p in papers),
            counts=dict(Counter(p for _, p in votes)),
            voters=tuple(v for v, _ in votes),
        )
        if kind in IN_THREAD:
            announced = self.store.deliveries.for_day(channel.id, tl.day, DeliveryKind.RG_PICK)
            messages = self.store.ledger.messages(announced.id) if announced else []
            if not messages or not messages[0].message_ref:
                return None
            post = ReadingPost(**{**post.__dict__, "reply_to": messages[0].message_ref})
        return post

    def _open(self, channel: Channel, tl: Timeline) -> Poll:
        ids = [c.paper.id for c in self.candidates(channel.id, tl)]
        return self.store.reading.open_poll(channel.id, tl.day, tl.meeting, tl.closes, ids)

    def candidates(self, channel_id: int, tl: Timeline) -> list[Candidate]:
        """This week's candidates, in the order the poll shows them (see the module's doc)."""
        read = self.store.reading.picks(channel_id)
        noms = [n for n in self.store.reading.nominations(channel_id) if n.paper_id not in read]
        thumbs = Counter(
            p for p, _, _ in self.store.channels.thumbs_up([channel_id], since=tl.opens - WEEK)
        )
        taken = {n.paper_id for n in noms} | read
        liked = [
            p for p, _ in sorted(thumbs.items(), key=lambda x: (-x[1], x[0])) if p not in taken
        ]
        papers = self.store.papers.get_many([n.paper_id for n in noms] + liked[:LIKED])
        out = [
            Candidate(papers[n.paper_id], n.user, thumbs[n.paper_id])
            for n in noms
            if n.paper_id in papers
        ]
        out += [Candidate(papers[p], None, thumbs[p]) for p in liked[:LIKED] if p in papers]
        return out[:CANDIDATES]

    def _described(
        self, channel_id: int, ids: tuple[str, ...], tl: Timeline, papers: dict | None = None
    ) -> tuple[Candidate, ...]:
        papers = papers if papers is not None else self.store.papers.get_many(list(ids))
        noms = {n.paper_id: n.user for n in self.store.reading.nominations(channel_id)}
        thumbs = Counter(
            p for p, _, _ in self.store.channels.thumbs_up([channel_id], since=tl.opens - WEEK)
        )
        return tuple(Candidate(papers[i], noms.get(i), thumbs[i]) for i in ids if i in papers)

    def decide(self, poll: Poll) -> Poll:
        """The poll's outcome, computed and stored once (the first caller's stands)."""
        if poll.decided:
            return poll
        outcome, pick, tied = tally(poll.candidates, self.store.reading.votes(poll.id))
        return self.store.reading.decide(poll.id, outcome, pick, tied)

    # --- history ---------------------------------------------------------------------------

    def history(self, ref: ChannelRef) -> list[Read]:
        """Papers the group picked, newest meeting first."""
        channel = self.channels.lookup.get(ref)
        if channel is None:
            return []
        polls = [p for p in self.store.reading.polls(channel.id) if p.pick]
        papers = self.store.papers.get_many([p.pick for p in polls if p.pick])
        out = []
        for p in polls:
            if p.pick not in papers:
                continue
            votes = self.store.reading.votes(p.id)
            mine = sum(v == p.pick for _, v in votes)
            out.append(Read(p.meeting_at, papers[p.pick], mine, len(votes), p.outcome or ""))
        return out

    def bibtex(self, ref: ChannelRef) -> str:
        """BibTeX of every paper the group read (the existing export's entries)."""
        from digest.text.bibtex import export

        return export([r.paper for r in reversed(self.history(ref))])
