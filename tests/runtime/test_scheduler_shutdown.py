"""A clean stop while a sweep is running logs no traceback.

Repro: `DIGESTBOT_DELIVERY_SWEEP_SECONDS=0.05 sh -c 'sleep 6 | digestbot run'` logged
`Job "DigestScheduler.sweep" raised an exception … CancelledError` in about half the runs:
at shutdown the event loop cancels the running sweep. Break tried on purpose (turned red):
`quiet_on_shutdown` re-raising the CancelledError (or the sweep job added unwrapped).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from bot.runtime.scheduler import DigestScheduler
from digest.delivery.steps import Deliveries


class BlockedRunner:
    """A runner whose recovery is still waiting (a slow database) when the bot stops."""

    adapters: dict = {}

    def __init__(self, deliveries: Deliveries) -> None:
        self.started = asyncio.Event()
        self.deliveries = deliveries  # the first tick reads the (no) due channels

    async def recover(self) -> None:
        self.started.set()
        await asyncio.sleep(60)


def test_stopping_during_a_sweep_is_quiet(app, caplog):
    async def serve() -> None:
        runner = BlockedRunner(Deliveries(app.papers, "w1"))
        sched = DigestScheduler(runner, sweep_every=timedelta(seconds=0.05))
        sched.start()
        await asyncio.wait_for(runner.started.wait(), 5)
        sched.shutdown()  # as `digestbot run` does; asyncio.run then cancels the running sweep

    with caplog.at_level(logging.DEBUG):
        asyncio.run(serve())
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]
    assert any("stopped by shutdown" in r.getMessage() for r in caplog.records)
