"""Sends each channel's weekly picture once per week, as a delivery of the one ledger.

The composition root (bot/app.py) runs ``WeeklySender.sweep`` as its own APScheduler job. A
picture is claimed like a digest (digest/delivery/steps.py ``claim_picture``) and sent by the
same runner (bot/runtime/runner.py): leased, marked sending, uploaded under its key, confirmed;
after a crash or a passing failure the runner's sweep takes it over, looks it up on the platform
and finishes or fails it with a reason.
"""

from __future__ import annotations

import asyncio
import logging

from bot.runtime.runner import DigestRunner, PostSweep
from digest.clock import Clock, system_clock
from digest.weekly.picture import WeeklyPictures

log = logging.getLogger(__name__)


class WeeklySender(PostSweep):
    """Claims owed pictures and has the runner draw and send each; platform-neutral."""

    job = "weekly picture sweep"

    def __init__(
        self, pictures: WeeklyPictures, runner: DigestRunner, clock: Clock = system_clock
    ) -> None:
        super().__init__(runner, clock)
        self.pictures = pictures

    async def _sweep(self) -> dict[str, str]:
        done: dict[str, str] = {}
        due = await asyncio.to_thread(self.pictures.due, self.clock(), self.platforms())
        # One at a time, each claimed just before it is drawn: drawing is CPU work, pictures are
        # not urgent, and a claim's lease must not run out while earlier ones are drawn.
        claim_picture = self.runner.deliveries.claim_picture
        for channel, week in due:
            if (claim := await asyncio.to_thread(claim_picture, channel, week)) is not None:
                adapter = self.runner.adapters[channel.ref.platform]
                outcome = await self.runner.send(claim, adapter)
                done[str(channel.id)] = str(outcome)
                log.info("weekly picture for %s, week of %s: %s", channel.ref, week, outcome)
        return done
