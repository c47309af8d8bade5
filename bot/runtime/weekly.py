"""Sends each channel's weekly picture through its platform's ``upload_image``, once per week.

The composition root (bot/app.py) runs ``WeeklySender.sweep`` as its own APScheduler job; the
claims live in the database (digest/store/weekly.py), so several processes may sweep together.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import timedelta

from bot.ports import TRANSIENT, ImagePoster, PostError
from digest.clock import Clock, system_clock
from digest.weekly.picture import WeeklyLease, WeeklyPictures

log = logging.getLogger(__name__)
#: How often the job looks for owed pictures (each is owed from Monday at the digest time).
EVERY = timedelta(minutes=10)
#: Waits before another try after a passing failure (seconds): 5, 30 minutes, then 2 hours.
BACKOFF = (300.0, 1800.0, 7200.0)


class WeeklySender:
    """Claims owed pictures (and lapsed claims), draws each and uploads it; platform-neutral."""

    def __init__(
        self,
        pictures: WeeklyPictures,
        adapters: Mapping[str, object],
        clock: Clock = system_clock,
        backoff: tuple[float, ...] = BACKOFF,
    ) -> None:
        self.pictures = pictures
        # Only platforms that can share a picture (every adapter in bot/adapters can).
        self.adapters: dict[str, ImagePoster] = {
            p: a for p, a in adapters.items() if hasattr(a, "upload_image")
        }
        self.clock = clock
        self.backoff = backoff

    async def sweep(self) -> dict[str, str]:
        """Send every picture owed now; outcomes by channel. Never raises (a job must go on)."""
        try:
            return await self._sweep()
        except asyncio.CancelledError:  # shutdown: a claim not yet sent is taken over later
            return {}
        except Exception:  # noqa: BLE001 - a database blip: the next sweep tries again
            log.exception("weekly picture sweep failed")
            return {}

    async def _sweep(self) -> dict[str, str]:
        done: dict[str, str] = {}
        for lease in await asyncio.to_thread(self.pictures.take_over, set(self.adapters)):
            await self._send_logged(lease, done)
        due = await asyncio.to_thread(self.pictures.due, self.clock(), set(self.adapters))
        # One at a time, each claimed just before it is drawn: drawing is CPU work, pictures are
        # not urgent, and a claim's 5-minute lease must not run out while earlier ones are drawn
        # (claiming 10,000 first would let later leases lapse and other processes take them).
        for channel, week in due:
            if (lease := await asyncio.to_thread(self.pictures.claim, channel, week)) is not None:
                await self._send_logged(lease, done)
        return done

    async def _send_logged(self, lease: WeeklyLease, done: dict[str, str]) -> None:
        try:
            outcome = await self.send(lease)
        except Exception as exc:  # noqa: BLE001 - one channel's fault must not stop the others
            # (a picture that cannot be drawn failed here every sweep, first thing, and no
            # channel after it ever got one). Given up, never retried: the same fault again.
            log.exception("weekly picture for channel %s failed", lease.channel_id)
            outcome = f"not sent: {type(exc).__name__}: {exc}"[:300]
            try:
                await asyncio.to_thread(self.pictures.fail, lease, outcome)
            except Exception:  # noqa: BLE001 - the database too: the lease lapses, as after a crash
                log.exception("could not record the failed weekly picture")
        done[str(lease.channel_id)] = outcome
        log.info(
            "weekly picture for channel %s, week of %s: %s", lease.channel_id, lease.week, outcome
        )

    async def send(self, lease: WeeklyLease) -> str:
        """Draw and upload one claimed picture; what happened, in words."""
        found = await asyncio.to_thread(self.pictures.for_week, lease)
        if found is None:
            await asyncio.to_thread(self.pictures.nothing_to_draw, lease)
            return "nothing to draw"
        channel, pic = found
        adapter = self.adapters.get(channel.ref.platform)
        if adapter is None:  # claims are only made for our platforms; a taken-over one may not be
            await asyncio.to_thread(self.pictures.fail, lease, "platform not connected")
            return "platform not connected"
        if not await asyncio.to_thread(self.pictures.sending, lease):
            return "taken over by another worker"
        try:
            ref = await adapter.upload_image(
                channel.ref, pic.png, pic.alt, pic.title, filename=pic.filename
            )
        except PostError as exc:
            if exc.kind == TRANSIENT:
                wait = self.backoff[min(lease.attempts, len(self.backoff) - 1)]
                delay = max(exc.retry_after or 0.0, wait)
                if await asyncio.to_thread(self.pictures.retry_later, lease, exc.reason, delay):
                    return f"retrying later: {exc.reason}"
                return f"not sent: {exc.reason}"
            await asyncio.to_thread(self.pictures.fail, lease, exc.reason)
            return f"not sent: {exc.reason}"
        await asyncio.to_thread(self.pictures.posted, lease, ref)
        return "posted"
