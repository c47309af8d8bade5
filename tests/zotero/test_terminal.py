"""`digestbot cmd console:lab "me zotero connect"` at a real terminal (a pty): the user id is
asked, the key is read without echo, and neither the terminal nor the database shows it."""

from __future__ import annotations

import os
import pty
import select
import sys
import time
from pathlib import Path

import pytest

from tests.zotero.conftest import KEY, SECRET, USER_LIB

BIN = Path(sys.executable).parent / "digestbot"


def _drive(argv: list[str], env: dict[str, str], answers: dict[str, str], limit: float = 60):
    """Run ``argv`` on a pty, typing each answer when its prompt appears; all it printed."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the pty is its controlling terminal (getpass opens /dev/tty)
        os.execve(argv[0], argv, env)
    seen, pending, end = b"", dict(answers), time.monotonic() + limit
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        for prompt in list(pending):
            if prompt.encode() in seen:
                os.write(fd, (pending.pop(prompt) + "\n").encode())
    os.waitpid(pid, 0)
    os.close(fd)
    return seen.decode("utf-8", "replace")


@pytest.mark.skipif(not BIN.exists(), reason="the digestbot script is not installed")
def test_connect_at_a_terminal_hides_the_key(tmp_path, zotero_fake):
    """Breaks that turn this red: the key read with input() (echoed back on the pty); the
    prompts written where the terminal does not show them (the answers are never typed)."""
    zotero_fake.grant(KEY, USER_LIB)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGESTBOT_")}
    env |= {
        "DIGESTBOT_DATABASE_URL": f"sqlite:///{tmp_path / 't.db'}",
        "DIGESTBOT_INDEX_DIR": str(tmp_path / "index"),
        "DIGESTBOT_SECRET_KEY": SECRET,
        "DIGESTBOT_ZOTERO_API_URL": zotero_fake.url,
        "DIGESTBOT_SEMANTIC": "off",
    }
    base = [str(BIN), "cmd", "console:lab"]
    _drive([*base, "/papers me subscribe diffusion"], env, {})
    said = _drive(
        [*base, "/papers me zotero connect"],
        env,
        {"Zotero user id (or group:ID):": "475425", "Zotero API key:": KEY},
    )
    assert "Connected Zotero library users/475425" in said, said
    assert KEY not in said
    assert KEY.encode() not in (tmp_path / "t.db").read_bytes()
