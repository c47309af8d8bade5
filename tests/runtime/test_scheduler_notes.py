"""APScheduler's notes on a busy machine ("was missed by 0:00:01", "skipped: maximum number of
running instances reached") are not warnings: a late sweep simply runs late, an overlapping one
is INFO in the log, and while the console's prompt is up the log's lines go above it.

Breaks that turn these red: the sweep job back on APScheduler's default misfire grace (1 s: a
sweep late by more is skipped with "was missed by"); `SchedulerNoteFilter` not on the handler
(both notes print as WARNING on stderr, over the prompt); `LogsAbovePrompt` not swapping the
handler's stream (a log line goes to stderr while the prompt is up)."""

from __future__ import annotations

import asyncio
import io
import logging
import time
from datetime import timedelta

import pytest

from bot.logs import LogsAbovePrompt, configure
from bot.runtime.runner import DigestRunner
from bot.runtime.scheduler import DigestScheduler
from digest.delivery.steps import Deliveries
from tests.fakes.recording import RecordingAdapter


@pytest.fixture(autouse=True)
def _root_logger_restored():
    """`configure` binds the root handler to the test's captured stderr: put the old one back."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:], root.level = handlers, level


async def test_a_late_or_overlapping_sweep_does_not_warn(app, capsys):
    configure("INFO", "text")  # even the log's INFO lines say no sweep was missed
    runner = DigestRunner(Deliveries(app.channels, "w1"), {"console": RecordingAdapter()})
    sched = DigestScheduler(runner, sweep_every=timedelta(seconds=2))
    runs = []

    async def slow_sweep() -> None:
        runs.append(time.monotonic())
        if len(runs) == 1:
            time.sleep(3.5)  # the loop is blocked: the next sweep is late by 1.5 s
        else:
            await asyncio.sleep(2.5)  # still running when the next one is due: an overlap

    sched.sweep = slow_sweep
    sched.start(first_tick=False)
    try:
        await asyncio.sleep(7.5)
    finally:
        sched.scheduler.shutdown(wait=False)
    err = capsys.readouterr().err
    assert len(runs) >= 2  # the late sweep ran, late
    assert "missed by" not in err, err  # a late sweep is run, not skipped
    assert "WARNING" not in err, err  # the overlap is an INFO line at most


def test_the_notes_are_info_in_the_log(capsys):
    configure("INFO", "text")
    note = logging.getLogger("apscheduler.scheduler")
    note.warning(
        'Execution of job "%s" skipped: maximum number of running instances reached (%d)',
        "sweep",
        1,
    )
    logging.getLogger("apscheduler.executors.default").warning(
        'Run time of job "%s" was missed by %s', "sweep", timedelta(seconds=1)
    )
    note.warning("Something else went wrong")
    err = capsys.readouterr().err
    assert "INFO apscheduler.scheduler: Execution of job" in err
    assert "INFO apscheduler.executors.default: Run time" in err
    assert "WARNING apscheduler.scheduler: Something else went wrong" in err
    configure("WARNING", "text")


def test_log_lines_go_above_the_prompt_while_it_is_up(capsys):
    configure("WARNING", "text")
    above = io.StringIO()
    with LogsAbovePrompt(above):
        logging.getLogger("digest.test").warning("the database was slow")
    logging.getLogger("digest.test").warning("after the prompt")
    err = capsys.readouterr().err
    assert "the database was slow" in above.getvalue() and "the database was slow" not in err
    assert "after the prompt" in err
