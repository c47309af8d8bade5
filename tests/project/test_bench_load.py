"""bench/load.py on tiny sizes, so the load bench cannot rot unnoticed. Not a timed test: it
asserts the bench ran end to end against the real bot and that every command it sent was
acknowledged and answered, as the fakes recorded.

Breaks that turn this red: the Slack signature made with another secret (401: no ack, the
bot never answers `help`); a wrong option name in a Discord payload (the bot logs "Discord
command failed": the ERROR-line check); the stream sending nothing (no samples, no rows).
Tried and NOT caught: the gateway fake never sending READY (discord.py handles interactions
without it)."""

import asyncio

import pytest

from bench.load import run_backend
from bench.load_data import Config
from bench.load_report import COMMAND_HEADER, command_rows, report

# A real bot under load for over a minute: it runs with the reliability suite (CI, -m reliability).
pytestmark = pytest.mark.reliability


def test_the_load_bench_drives_the_real_bot_on_both_platforms_and_every_command_is_answered(
    tmp_path,
):
    cfg = Config(
        channels=4,
        papers=40,
        ingest=20,
        rate=4,
        duration=3,
        visible_timeout=10,
        grace=30,
        ready_timeout=120,
        due_phase=False,
        cli=False,
        seed=5,
    )
    result = asyncio.run(run_backend(cfg, "sqlite", tmp_path / "sqlite"))
    samples = result.samples
    assert len(samples) == 12
    assert {s.platform for s in samples} == {"slack", "discord"}
    assert {s.kind for s in samples} >= {"search", "list"}
    assert all(s.ack is not None and s.answered is not None for s in samples), [
        (s.platform, s.kind) for s in samples if s.answered is None
    ]
    rows = command_rows([result])
    assert [r[1] for r in rows] == ["discord", "slack"]
    assert all(r[-1] == "0" for r in rows)  # unanswered
    assert "known words" in result.visible  # the probe finds a paper the index can know
    assert result.ingest_rc == 0 and result.cpu_s > 0
    assert not any("ERROR lines" in n for n in result.notes), result.notes
    text = report(cfg, [result], [])
    assert " | ".join(COMMAND_HEADER) in text and "| sqlite | slack | 6 |" in text
