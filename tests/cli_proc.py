"""Run the real `digestbot` entry point in a subprocess with an isolated environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ENTRY = Path(sys.executable).parent / "digestbot"


def clean_env(folder: Path, **extra: str) -> dict[str, str]:
    """The environment minus every DIGESTBOT_ setting, with a database and index in ``folder``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGESTBOT_")}
    env |= {
        "DIGESTBOT_DATABASE_URL": f"sqlite:///{folder / 'cli.db'}",
        "DIGESTBOT_INDEX_DIR": str(folder / "index"),
        "COLUMNS": "200",
    }
    return env | extra


def digestbot(
    folder: Path, *args: str, timeout: float = 60, **env: str
) -> subprocess.CompletedProcess:
    """``digestbot ARGS`` run from ``folder``; returns the finished process (text output)."""
    cmd = [str(ENTRY)] if ENTRY.exists() else [sys.executable, "-m", "bot"]
    return subprocess.run(
        [*cmd, *args], cwd=folder, env=clean_env(folder, **env), capture_output=True, text=True,
        timeout=timeout, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def one_error(proc: subprocess.CompletedProcess) -> str:
    """Assert ``proc`` failed the documented way (one `error:` line, code 2) and return it."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    return lines[0]
