"""Run the `digestbot` command line for tests: in-process through `bot.cli.main.main` (fast), or as a
real process (`digestbot_proc`, for the few smoke tests that need one) with the same isolation.

Starting a process costs seconds of imports (scikit-learn, SQLAlchemy, the chat SDKs) and took
most of the suite's time; in-process runs pay for those once. What a process would have had of
its own is set up and put back around each call: the environment, the working folder, stdin,
stdout/stderr (strict UTF-8 like a pipe, so unencodable text still fails), argv and the root
logger. Settings third-party libraries read at import (huggingface_hub's HF_ENDPOINT, ...) and a
changed PYTHONPATH need a real process: use `digestbot_proc` for those.
"""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from pathlib import Path

ENTRY = Path(sys.executable).parent / "digestbot"


def clean_env(folder: Path, **extra: str) -> dict[str, str]:
    """The environment minus every DIGESTBOT_ setting, with a database and index in ``folder``.

    DIGESTBOT_SEMANTIC is kept (conftest sets it off): a test that wants semantic ranking says so,
    so whether the model happens to be installed never changes what these commands do or cost.
    """
    keep = ("DIGESTBOT_SEMANTIC",)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGESTBOT_") or k in keep}
    env |= {
        "DIGESTBOT_DATABASE_URL": f"sqlite:///{folder / 'cli.db'}",
        "DIGESTBOT_INDEX_DIR": str(folder / "index"),
        "COLUMNS": "200",
    }
    return env | extra


def _stream(errors: str) -> io.TextIOWrapper:
    """A text stream encoding like a pipe's: UTF-8, ``errors`` as Python uses for that stream."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors=errors, write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8", errors="replace")  # type: ignore[attr-defined]


def digestbot(
    folder: Path, *args: str, timeout: float = 60, input: str = "", **env: str
) -> subprocess.CompletedProcess:
    """``digestbot ARGS`` run from ``folder`` in this process; returns what a process would have.

    ``timeout`` is accepted for call compatibility with `digestbot_proc` and not enforced.
    """
    from bot.cli.main import main

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_io, saved_argv = (sys.stdin, sys.stdout, sys.stderr), sys.argv
    root, alembic = logging.getLogger(), logging.getLogger("alembic")
    saved_log = root.handlers[:], root.level, alembic.level
    out, err = _stream("strict"), _stream("backslashreplace")
    try:
        os.environ.clear()
        os.environ.update(clean_env(folder, **env))
        os.chdir(folder)
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(input), out, err
        sys.argv = [str(ENTRY), *args]  # click names the program after argv[0]
        try:
            code = main(list(args))
        except SystemExit as exc:  # what the script's sys.exit(main()) would have turned it into
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # a crash main() let through: a process would print the traceback
            import traceback

            traceback.print_exc()
            code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_io
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for handler in root.handlers:
            if handler not in saved_log[0]:
                handler.close()
        root.handlers[:] = saved_log[0]
        root.setLevel(saved_log[1])
        alembic.setLevel(saved_log[2])
    return subprocess.CompletedProcess(["digestbot", *args], code, _text(out), _text(err))


def digestbot_proc(
    folder: Path, *args: str, timeout: float = 60, **env: str
) -> subprocess.CompletedProcess:
    """``digestbot ARGS`` as a real process run from ``folder`` (the installed script)."""
    cmd = [str(ENTRY)] if ENTRY.exists() else [sys.executable, "-m", "bot"]
    return subprocess.run(
        [*cmd, *args],
        cwd=folder,
        env=clean_env(folder, **env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def one_error(proc: subprocess.CompletedProcess) -> str:
    """Assert ``proc`` failed the documented way (one `error:` line, code 2) and return it."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    return lines[0]
