"""A text file named on the command line or in a setting, read as UTF-8 or refused in one line."""

from __future__ import annotations

from pathlib import Path

from digest.errors import DigestError


def read_text_file(path: Path) -> str:
    """The UTF-8 text of ``path``; a missing file, a directory or other bytes is one clear error."""
    if not path.exists():
        raise DigestError(f"No such file: {path}")
    if path.is_dir():
        raise DigestError(f"'{path}' is a directory, not a file.")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DigestError(f"cannot read '{path}': not UTF-8 text (byte {exc.start}).") from None
    except OSError as exc:
        raise DigestError(f"cannot read '{path}': {exc.strerror or 'unreadable'}.") from None
