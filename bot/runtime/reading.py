"""Sends each reading group's posts (poll, announcement, thread, reminder, recap) as
deliveries of the one ledger, each once per meeting.

The composition root (bot/app.py) runs ``ReadingSender.sweep`` as its own APScheduler job.
What is owed comes from digest/reading/service.py (``ReadingGroups.due``: the week's
timeline in the meeting's zone, on the one clock); each post is claimed like a weekly picture
(digest/delivery/steps.py ``claim_post``) and sent by the same runner (bot/runtime/runner.py):
leased, marked sending, posted under its key, confirmed; after a crash or a passing failure the
runner's sweep takes it over, looks it up on the platform and finishes or fails it.
"""

from __future__ import annotations

import asyncio
import logging

from bot.runtime.runner import DigestRunner, PostSweep
from digest.clock import Clock, system_clock
from digest.reading.schedule import KINDS
from digest.reading.service import ReadingGroups

log = logging.getLogger(__name__)


class ReadingSender(PostSweep):
    """Claims the reading-group posts owed now and has the runner send each; platform-neutral."""

    job = "reading group sweep"

    def __init__(
        self, groups: ReadingGroups, runner: DigestRunner, clock: Clock = system_clock
    ) -> None:
        super().__init__(runner, clock)
        self.groups = groups

    async def _sweep(self) -> dict[str, str]:
        done: dict[str, str] = {}
        platforms = self.platforms()
        claim_post = self.runner.deliveries.claim_post
        # Each post needs the one before it posted (the pick its poll, the thread posts the
        # pick), so a pass that sent something is followed by another (a late start catches up
        # a week's posts in one sweep); the ledger's unique key makes each one once.
        for _ in range(len(KINDS)):
            due = await asyncio.to_thread(self.groups.due, self.clock(), platforms)
            sent = False
            for channel, kind, meeting in due:
                day = meeting.date()
                if (claim := await asyncio.to_thread(claim_post, channel, day, kind)) is None:
                    continue
                adapter = self.runner.adapters[channel.ref.platform]
                outcome = await self.runner.send(claim, adapter)
                done[f"{channel.id}:{kind.value}"] = str(outcome)
                sent = True
                log.info("reading group %s for %s, meeting %s: %s", kind, channel.ref, day, outcome)
            if not sent:
                break
        return done
