"""`digestbot cmd` on a console channel is the console's user: `/papers me` reaches the same
personal digest as the `digestbot run` prompt."""

import re
import subprocess

from tests.support.cli_proc import ENTRY, clean_env, digestbot, one_error


def test_cmd_and_run_share_the_console_users_personal_digest(tmp_path):
    """Breaks that turn this red: `cmd` defaulting to user `cli` on console channels (its `me`
    commands act on console:@cli, which `run`'s prompt never sees); `run` and `cmd` naming the
    console user differently."""
    made = digestbot(tmp_path, "cmd", "console:lab", "/papers me subscribe reinforcement learning")
    assert made.returncode == 0 and "Now following" in made.stdout, made.stderr
    listed = digestbot(tmp_path, "cmd", "console:lab", "/papers me list")
    assert listed.returncode == 0 and "reinforcement learning" in listed.stdout
    run = subprocess.run(
        [str(ENTRY), "run"],
        cwd=tmp_path,
        input="/papers me list\nexit\n",
        text=True,
        capture_output=True,
        timeout=120,
        env=clean_env(tmp_path, DIGESTBOT_HEALTH_PORT="0"),
    )
    assert run.returncode == 0, run.stderr[-2000:]
    mine = run.stdout[run.stdout.index("Your personal digest") :]
    assert "1. topic: reinforcement learning" in mine
    channels = digestbot(tmp_path, "channels").stdout
    assert "console:@you" in channels and "console:@cli" not in channels


def test_an_explicit_user_still_wins(tmp_path):
    """Break that turns this red: the console default overriding `--user`."""
    digestbot(tmp_path, "cmd", "console:lab", "/papers me subscribe graphs", "--user", "ann")
    assert "console:@ann" in digestbot(tmp_path, "channels").stdout


def test_cmd_on_an_unset_personal_digest_says_what_chat_and_readme_say(tmp_path):
    """`digestbot cmd CH "/papers me list"` before any `me subscribe`: the README's `me` row
    promises "You have no personal digest yet"; the CLI says that sentence, in one `error:` line
    (exit 2), not "No channel console:@you; subscribe first"; an ordinary unknown channel keeps
    its own line.

    Breaks that turn this red: cmd_cmd mapping NO_PERSONAL back to no_channel(target) (the old
    "one CLI wording"); the README's sentence changed without the CLI (the README check)."""
    from pathlib import Path

    from bot.commands.core import NO_PERSONAL

    readme = (Path(__file__).parents[2] / "docs" / "commands.md").read_text(encoding="utf-8")
    me_row = next(line for line in readme.splitlines() if line.startswith("| `me <command>`"))
    promised = re.search(r'answers "([^"]+)"', me_row).group(1)
    assert NO_PERSONAL.startswith(promised)
    assert digestbot(tmp_path, "subscribe", "console:t1", "sparse").returncode == 0
    for text in ("/papers me list", "/papers me stats"):
        line = one_error(digestbot(tmp_path, "cmd", "console:t1", text))
        assert line == f"error: {NO_PERSONAL}", line
    line = one_error(digestbot(tmp_path, "cmd", "slack:T1/C1", "/papers me list"))
    assert line == f"error: {NO_PERSONAL}", line
    assert "No channel console:t9" in one_error(
        digestbot(tmp_path, "cmd", "console:t9", "/papers list")
    )
