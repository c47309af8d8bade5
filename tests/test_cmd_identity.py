"""`digestbot cmd` on a console channel is the console's user: `/papers me` reaches the same
personal digest as the `digestbot run` prompt."""

import subprocess

from tests.cli_proc import ENTRY, clean_env, digestbot


def test_cmd_and_run_share_the_console_users_personal_digest(tmp_path):
    """Breaks that turn this red: `cmd` defaulting to user `cli` on console channels (its `me`
    commands act on console:@cli, which `run`'s prompt never sees); `run` and `cmd` naming the
    console user differently."""
    made = digestbot(tmp_path, "cmd", "console:lab", "/papers me subscribe reinforcement learning")
    assert made.returncode == 0 and "Now following" in made.stdout, made.stderr
    listed = digestbot(tmp_path, "cmd", "console:lab", "/papers me list")
    assert listed.returncode == 0 and "reinforcement learning" in listed.stdout
    run = subprocess.run(
        [str(ENTRY), "run"], cwd=tmp_path, input="/papers me list\nexit\n", text=True,
        capture_output=True, timeout=120,
        env=clean_env(tmp_path, DIGESTBOT_HEALTH_PORT="0"),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    mine = run.stdout[run.stdout.index("Your personal digest") :]
    assert "1. topic: reinforcement learning" in mine
    channels = digestbot(tmp_path, "channels").stdout
    assert "console:@you" in channels and "console:@cli" not in channels


def test_an_explicit_user_still_wins(tmp_path):
    """Break that turns this red: the console default overriding `--user`."""
    digestbot(tmp_path, "cmd", "console:lab", "/papers me subscribe graphs", "--user", "ann")
    assert "console:@ann" in digestbot(tmp_path, "channels").stdout
