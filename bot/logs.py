"""Logging setup: plain text or one JSON object per line, with chat ids as fields and secrets redacted."""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime

FIELDS = ("platform", "workspace", "channel")
# Slack and Discord tokens: never written, whatever logs them.
SECRET = re.compile(
    r"xox[abposr]-[A-Za-z0-9-]+|xapp-[A-Za-z0-9-]+|\b[MN][A-Za-z\d]{23,30}\.[\w-]{6}\.[\w-]{27,38}"
)


def redact(text: str) -> str:
    """The text with anything token-shaped replaced."""
    return SECRET.sub("[redacted]", text)


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, chat ids, exception."""

    def format(self, record: logging.LogRecord) -> str:
        out = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "msg": redact(record.getMessage()),
        }
        out |= {k: getattr(record, k) for k in FIELDS if getattr(record, k, None)}
        if record.exc_info:
            out["exc"] = redact(self.formatException(record.exc_info))
        return json.dumps(out, ensure_ascii=False)


class RedactingFormatter(logging.Formatter):
    """Plain text, secrets redacted."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def configure(level: str = "WARNING", fmt: str = "text") -> None:
    """Set up the root logger once (the CLI calls this at start)."""
    handler = logging.StreamHandler()
    handler.setFormatter(
        JsonFormatter()
        if fmt == "json"
        else RedactingFormatter("%(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
