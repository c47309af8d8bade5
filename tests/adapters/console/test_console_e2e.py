"""A scripted end-to-end session through the CLI and the console adapter."""

import dataclasses
import json
import os
from datetime import UTC, datetime, timedelta

import time_machine

from bot.cli.main import main
from bot.commands.core import REGISTRY
from tests.support.corpus import synthetic_records
from tests.support.votes import settle_votes


def write_jsonl(path, records):
    with path.open("w", encoding="utf-8") as f:
        for r in records:
            row = dataclasses.asdict(r)
            f.write(
                json.dumps(
                    {
                        "id": row["id"],
                        "title": row["title"],
                        "abstract": row["abstract"],
                        "authors": row["authors"],
                        "venue": row["venue"],
                    }
                )
                + "\n"
            )


def run(capsys, *args):
    code = main(list(args))
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_subscribe_digest_feedback_next_day(env_isolated, capsys):
    """Each day's digest is posted on that day (the clock moved): `digest --date` refuses days
    before the channel existed and days past the catch-up window."""
    with time_machine.travel(datetime(2026, 11, 1, 10, 0, tzinfo=UTC), tick=True):
        ids1 = _day_one(env_isolated, capsys)
    with time_machine.travel(datetime(2026, 11, 2, 10, 0, tzinfo=UTC), tick=True):
        _day_two(env_isolated, capsys, ids1)


def _day_one(env_isolated, capsys) -> list[str]:
    day1 = [r for r in synthetic_records(per_topic=20)]
    write_jsonl(env_isolated / "day1.jsonl", day1)
    assert run(capsys, "ingest", "day1.jsonl")[0] == 0

    code, out, _ = run(capsys, "subscribe", "console:lab", "graph neural networks")
    assert code == 0 and "Now following topic 'graph neural networks'" in out
    code, out, _ = run(capsys, "digest", "console:lab", "--date", "2026-11-01", "--json")
    first = json.loads(out)
    assert code == 0 and first["outcome"] == "posted 5 papers"
    ids1 = [p["id"] for p in first["papers"]]
    assert all(i.startswith("syn-gnn") for i in ids1) and all(p["why"] for p in first["papers"])

    # The same day again posts nothing; the channel list shows the digest.
    assert (
        json.loads(run(capsys, "digest", "console:lab", "--date", "2026-11-01", "--json")[1])[
            "outcome"
        ]
        == "already delivered"
    )
    assert "last 2026-11-01 (posted 20" in run(capsys, "channels")[1]

    # Feedback: the channel likes heterophily papers and dislikes molecule ones.
    for pid in ids1:
        vote = "up" if "gnnhet" in pid else "down"
        assert run(capsys, "feedback", "console:lab", pid, vote, "--user", "ann")[0] == 0
    return ids1


def _day_two(env_isolated, capsys, ids1: list[str]) -> None:
    # Day 2: new GNN papers of both kinds arrive.
    fresh = [
        r
        for r in synthetic_records(per_topic=26)
        if int(r.id.rsplit("-", 1)[1]) >= 20 or "gnnhet" in r.id or "gnnmol" in r.id
    ]
    fresh = [r for r in fresh if r.id not in ids1]
    write_jsonl(env_isolated / "day2.jsonl", fresh)
    run(capsys, "ingest", "day2.jsonl")
    code, out, _ = run(capsys, "digest", "console:lab", "--date", "2026-11-02", "--json")
    ids2 = [p["id"] for p in json.loads(out)["papers"]]
    assert code == 0 and ids2 and not set(ids1) & set(ids2)  # differs, repeats nothing


def test_cmd_runs_chat_commands_like_a_platform(env_isolated, capsys):
    write_jsonl(env_isolated / "p.jsonl", synthetic_records(per_topic=8))
    run(capsys, "ingest", "p.jsonl")
    code, out, _ = run(capsys, "cmd", "console:lab", "/papers help")
    assert code == 0 and all(f"/papers {name}" in out for name in REGISTRY)
    run(capsys, "cmd", "console:lab", "/papers subscribe federated learning")
    code, out, _ = run(capsys, "cmd", "console:lab", "/papers digest now")
    assert "=== #lab ===" in out and "Papers for" in out and "Today's digest: posted" in out
    code, out, _ = run(capsys, "cmd", "console:lab", "/papers digest now")
    assert "Today's digest: already delivered." in out
    code, out, _ = run(capsys, "cmd", "console:lab", "/papers schedule 09:00 Mars/Base")
    assert code == 2 and "Unknown time zone 'Mars/Base'" in out  # an error reply exits 2


def test_run_on_an_empty_machine_prints_a_real_digest(env_isolated, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("/papers list\n"))
    code, out, _ = run(capsys, "run")
    assert code == 0
    assert "Loaded 19 bundled NeurIPS 2026 papers." in out
    assert "=== #lab ===" in out and "why: matches" in out
    assert "TRACE: Temporal Reconstruction Attack" in out or "Sparse autoencoders" in out
    assert "1. topic: sparse autoencoders" in out  # the /papers list typed at the prompt
    code, out, _ = run(capsys, "run")  # second start: today's digest is not posted again
    assert code == 0 and "=== #lab ===" not in out
    # A channel someone made keeps to its schedule: starting the bot does not post it early.
    # (Break: post every console channel without a digest at start -> red.)
    assert run(capsys, "subscribe", "console:team", "LLM alignment")[0] == 0
    day = (datetime.now(UTC) + timedelta(days=2)).strftime("%a").lower()  # never due today
    assert run(capsys, "cmd", "console:team", f"/papers schedule 09:00 UTC {day}")[0] == 0
    code, out, _ = run(capsys, "run")
    assert code == 0 and "=== #team ===" not in out


def test_channel_argument_errors(env_isolated, capsys):
    code, _, err = run(capsys, "subscribe", "lab", "graphs")
    assert code == 2 and err.startswith("error: Channel must look like platform:id")
    code, _, err = run(capsys, "digest", "console:lab", "--date", "tomorrow")
    assert code == 2 and "--date must look like" in err
    code, _, err = run(capsys, "feedback", "console:lab", "x", "sideways")
    assert code == 2 and "up or down" in err


def test_sigterm_stops_the_console_bot_cleanly(tmp_path):
    """`docker stop` and systemd send SIGTERM to a token-less `digestbot run` waiting at its prompt:
    it stops with exit 0, no traceback, and what it stored is intact.

    Break seen red: the console without a SIGTERM handler (the process died by the signal: -15);
    the stdin reader on asyncio.to_thread (the stop waited for a line that never came: timeout)."""
    import signal
    import subprocess
    import sys
    import time

    from tests.support.cli_proc import ENTRY, clean_env, digestbot

    cmd = [str(ENTRY)] if ENTRY.exists() else [sys.executable, "-m", "bot"]
    proc = subprocess.Popen(
        [*cmd, "run"],
        cwd=tmp_path,
        env=clean_env(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        end = time.monotonic() + 120
        seen = ""
        while "Type /papers help" not in seen and time.monotonic() < end:
            seen += proc.stdout.readline()
        assert "Type /papers help" in seen, seen
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)  # stdin stays open: nobody types a line or closes the terminal
        out, err = proc.stdout.read(), proc.stderr.read()
    finally:
        proc.kill()
        proc.stdin.close()
    assert proc.returncode == 0, (proc.returncode, err)
    assert "Traceback" not in out + err
    channels = digestbot(tmp_path, "channels")
    assert channels.returncode == 0 and "console:lab" in channels.stdout


def test_cli_votes_on_a_console_channel_are_the_prompts_user(env_isolated, capsys):
    """`feedback` on a console channel votes as `run`'s console user, like `cmd` there: the same
    person voting twice withdraws, never two voters; `--user ""` is refused in one line, by both.

    Breaks that turn this red: `feedback`'s default user back to "cli" (the chat `up` records a
    second voter instead of withdrawing); `cli_user` returning an empty name (a vote by '' is
    stored, exit 0); `cmd` keeping its `user or ...` fallback (an empty --user acts as `you`);
    no surrogate check in `cli_user` or on the paper id (UnicodeEncodeError at the database)."""
    write_jsonl(env_isolated / "p.jsonl", synthetic_records(per_topic=3))
    assert run(capsys, "ingest", "p.jsonl")[0] == 0
    assert run(capsys, "subscribe", "console:lab", "graph neural networks")[0] == 0
    pid = synthetic_records(per_topic=3)[0].id
    code, out, _ = run(capsys, "feedback", "console:lab", pid, "up")
    assert code == 0 and "👍 recorded" in out
    settle_votes(os.environ["DIGESTBOT_DATABASE_URL"])  # later than a double click
    code, out, _ = run(capsys, "cmd", "console:lab", f"/papers up {pid}")
    assert code == 0 and "withdrawn" in out.lower()
    for args in (("feedback", "console:lab", pid, "down"), ("cmd", "console:lab", "/papers list")):
        code, out, err = run(capsys, *args, "--user", " ")
        assert code == 2 and err.strip() == "error: --user needs a name, e.g. --user ann."
    # Bytes that are not UTF-8 arrive as lone surrogates: one line each, nothing stored.
    code, _, err = run(capsys, "feedback", "console:lab", pid, "down", "--user", "a\udcff")
    assert (
        code == 2
        and err.strip() == "error: --user holds bytes that are not UTF-8; retype the name."
    )
    code, _, err = run(capsys, "feedback", "console:lab", "x\udcff", "down")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "not UTF-8" in err
