"""The in-process runner (tests/support/cli_proc.py) leaves the test process as it found it.

Breaks that turn this red: the environment not put back after a call (seen red: the settings
case keeps DIGESTBOT_LOG_FORMAT); the root logger's handlers not restored (seen red: the
handler writing to the call's capture stays on the root logger); argv not set (the help names `pytest`, not
`digestbot`, as test_cli_bad_input also catches).
"""

import logging
import os
import sys

from tests.support.cli_proc import digestbot, one_error


def test_a_call_restores_env_cwd_argv_streams_and_logging(tmp_path):
    before = (dict(os.environ), os.getcwd(), sys.argv[:], sys.stdout, sys.stderr)
    handlers = logging.getLogger().handlers[:]
    done = digestbot(tmp_path, "-v", "channels", DIGESTBOT_LOG_FORMAT="json")
    assert done.returncode == 0 and done.stdout.startswith("No channels yet"), done
    assert (dict(os.environ), os.getcwd(), sys.argv[:], sys.stdout, sys.stderr) == before
    assert logging.getLogger().handlers == handlers


def test_each_call_reads_its_own_settings(tmp_path):
    """Settings are read per invocation: a bad value in one call does not leak into the next."""
    assert "DIGESTBOT_LOG_FORMAT" in one_error(
        digestbot(tmp_path, "channels", DIGESTBOT_LOG_FORMAT="xml")
    )
    assert digestbot(tmp_path, "channels").returncode == 0
