"""Real-process smoke tests: the installed `digestbot` script, start to exit, as a user runs it.

The other command-line tests run in-process (tests/support/cli_proc.py); these few keep what only a real
process shows: the entry point is installed and importable, exit codes reach the shell, output
goes through real pipes, and settings are read from a fresh environment.

Breaks that turn this red: main() printing the `error:` line for a DigestError but returning 0
(seen red: the bad-setting case exits 0); expected red, not run: the `[project.scripts]` entry
removed or renamed (no script), a heavy import in bot/cli/main.py raising at load (every case), the
bundled papers missing from the install (ingest fails).
"""

import json

from digest import BUNDLED_PAPERS
from tests.support.cli_proc import digestbot_proc, one_error


def test_help_and_a_usage_error(tmp_path):
    shown = digestbot_proc(tmp_path, "--help")
    assert shown.returncode == 0 and "ingest" in shown.stdout and "digest" in shown.stdout
    assert "--nope" in one_error(digestbot_proc(tmp_path, "channels", "--nope"))


def test_a_bad_setting_is_one_line_and_exit_2(tmp_path):
    line = one_error(digestbot_proc(tmp_path, "channels", DIGESTBOT_LOG_FORMAT="xml"))
    assert "DIGESTBOT_LOG_FORMAT" in line and "text or json" in line


def test_ingest_subscribe_digest_json_across_processes(tmp_path):
    """Each step is its own process, so what one stored the next one reads from the database."""
    added = digestbot_proc(tmp_path, "ingest", str(BUNDLED_PAPERS))
    assert added.returncode == 0 and "new" in added.stdout, added.stderr
    made = digestbot_proc(tmp_path, "subscribe", "console:lab", "sparse autoencoders")
    assert made.returncode == 0, made.stderr
    proc = digestbot_proc(tmp_path, "digest", "console:lab", "--json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["outcome"].startswith("posted") and doc["papers"]
    assert "console:lab" in digestbot_proc(tmp_path, "channels").stdout


def test_a_chat_error_exits_2_through_the_shell(tmp_path):
    done = digestbot_proc(tmp_path, "cmd", "console:lab", "/papers size 0")
    assert done.returncode == 2 and done.stdout.startswith("⚠ Digest size must be"), done
