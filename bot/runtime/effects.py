"""One executor for what a reply asks beyond its text (a file to attach, a schedule that changed,
a digest to post now), carried out the same way on every platform and the command line.

Each platform passes in only how it sends things (an ``Outlet``); adding an effect means a field
on ``Reply``, a step in ``EffectExecutor.carry_out`` and, if it needs the platform, one method on
``Outlet`` that every adapter implements.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import date, datetime
from typing import TYPE_CHECKING, Protocol

from digest.clock import Clock, system_clock
from digest.clock.times import local_day

if TYPE_CHECKING:
    from bot.commands.replies import Reply
    from digest.channels.service import ChannelService
    from digest.models import ChannelRef

#: Posts a channel's digest for a day now and says how it went ("posted 5 papers").
DeliverNow = Callable[["ChannelRef", date], Awaitable[str]]


class Outlet(Protocol):
    """How one platform sends a reply to the person who asked."""

    async def attach(self, reply: Reply) -> Reply:
        """Send the reply's file the platform's way; the reply then says where it went (or why
        it could not go) and carries no attachment if the file went separately."""

    async def answer(self, reply: Reply) -> None:
        """Send the reply itself (public or private, as the platform and the reply decide)."""

    async def tell(self, text: str) -> None:
        """A short private note to the person who asked (e.g. how `digest now` went)."""


class EffectExecutor:
    """Carries out a reply: its file, the reply, then what it asks of the scheduler and runner."""

    def __init__(
        self,
        channels: ChannelService,
        deliver: DeliverNow | None = None,
        poke: Callable[[], None] = lambda: None,
        now: Clock = system_clock,
    ) -> None:
        self.channels = channels
        self._deliver = deliver
        self._poke = poke
        self._now = now

    def schedule_changed(self) -> None:
        """A channel's schedule or pause changed: the scheduler (if this process runs one) looks
        at due channels now instead of at its next sweep."""
        self._poke()

    async def carry_out(self, reply: Reply, out: Outlet, now: datetime | None = None) -> Reply:
        """Send ``reply`` through ``out`` with its effects, in the order the person sees them:
        the file (so the answer can say where it went), the answer, then the digest posted now
        (``now``: the asker's instant, default the clock). Returns the reply as sent."""
        if reply.attachment is not None or reply.image is not None:
            reply = await out.attach(reply)
        await out.answer(reply)
        if reply.schedule_changed is not None:
            self.schedule_changed()
        if reply.deliver_now is not None and self._deliver is not None:
            ref = reply.deliver_now
            channel = await asyncio.to_thread(self.channels.channel, ref)
            outcome = await self._deliver(ref, local_day(now or self._now(), channel.timezone))
            await out.tell(f"Today's digest: {outcome}.")
        return reply
