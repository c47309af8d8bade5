"""Logging setup: plain text or one JSON object per line, with chat ids as fields and secrets redacted."""

from __future__ import annotations

import json
import logging
import re
from contextlib import nullcontext
from datetime import UTC, datetime

FIELDS = ("platform", "workspace", "channel")
# Slack and Discord tokens: never written, whatever logs them.
SECRET = re.compile(
    r"xox[abposr]-[A-Za-z0-9-]+|xapp-[A-Za-z0-9-]+|\b[MN][A-Za-z\d]{23,30}\.[\w-]{6}\.[\w-]{27,38}"
)


# An OAuth redirect's one-time `code` and `state`, as a query string (the access log) or a
# parsed mapping (Bolt's warnings): whoever reads the log could finish someone else's install.
OAUTH = re.compile(r"""(\b(?:code|state)=|['"](?:code|state)['"]\s*:\s*\[?\s*['"])[^&\s'"]+""")


#: Secrets this process holds that have no recognisable shape (people's Zotero API keys), added
#: as they are opened: whatever logs one, the redactor writes [redacted] instead.
_KNOWN: set[str] = set()


def never_log(secret: str) -> None:
    """Redact ``secret`` from every log line from now on."""
    if len(secret) >= 8:
        _KNOWN.add(secret)


def redact(text: str) -> str:
    """The text with anything token-shaped replaced, and OAuth codes and states."""
    text = OAUTH.sub(r"\1[redacted]", SECRET.sub("[redacted]", text))
    for secret in tuple(_KNOWN):
        if secret in text:
            text = text.replace(secret, "[redacted]")
    return text


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
    """Plain text, secrets redacted; without ``tracebacks``, an error's last line only."""

    def __init__(self, fmt: str, tracebacks: bool = True) -> None:
        super().__init__(fmt)
        self.tracebacks = tracebacks

    def formatException(self, ei) -> str:  # noqa: ANN001, N802 - logging's signature
        if self.tracebacks:
            return super().formatException(ei)
        last = super().formatException(ei).strip().splitlines()[-1:] or ["error"]
        return f"  {last[0]} (run with -v for the traceback)"

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


#: Libraries that put request bodies and API payloads (so, what users typed) into log messages.
CHAT_LIBRARIES = ("slack_bolt", "slack_sdk", "slack")
PAYLOAD = re.compile(r"[({\[].*", re.DOTALL)  # from the first bracket on: bodies, dicts, reprs
SIGNATURE = "Invalid request signature"


class ChatPayloadFilter(logging.Filter):
    """Keeps request bodies and payloads that Slack's libraries log out of every log line.

    Their DEBUG and INFO records are dropped (each outgoing call and incoming body is logged
    there), a rejected signature becomes one line with the body's size only, and warnings and
    errors keep their first words, never the bracketed body, payload or exception text after them.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(CHAT_LIBRARIES):
            return True
        message = record.getMessage()
        if SIGNATURE in message:
            size = len(message.partition("body: ")[2]) - 1
            record.msg, record.args = (
                "rejected a Slack request: invalid signature (%d bytes)",
                (max(size, 0),),
            )
            return True
        if record.levelno < logging.WARNING:
            return False
        head = PAYLOAD.sub("(…)", message.splitlines()[0] if message else "")
        kind = type(record.exc_info[1]).__name__ if record.exc_info else ""
        record.msg, record.args = (f"{head} [{kind}]" if kind else head), ()
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


# APScheduler's notes that a job ran late or that its previous run was still going: on a busy
# machine a sweep is late or long now and then, and the next one does the work; nothing to act on.
SCHEDULER_NOTES = ("was missed by", "maximum number of running instances reached")


class SchedulerNoteFilter(logging.Filter):
    """APScheduler's lateness and overlap warnings logged as INFO: in the log with ``-v`` or
    ``DIGESTBOT_LOG_LEVEL=INFO``, never a warning (so never over the console's prompt)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("apscheduler") or record.levelno != logging.WARNING:
            return True
        if not any(note in str(record.msg) for note in SCHEDULER_NOTES):
            return True
        record.levelno, record.levelname = logging.INFO, "INFO"
        return logging.getLogger().isEnabledFor(logging.INFO)


def configure(level: str = "WARNING", fmt: str = "text", tracebacks: bool = True) -> None:
    """Set up the root logger once (the CLI calls this at start); see ChatPayloadFilter.
    ``tracebacks`` False: text logs show an error's last line only (one-shot commands)."""
    handler = logging.StreamHandler()
    handler.addFilter(ChatPayloadFilter())
    handler.addFilter(SchedulerNoteFilter())
    handler.setFormatter(
        JsonFormatter()
        if fmt == "json"
        else RedactingFormatter("%(levelname)s %(name)s: %(message)s", tracebacks)
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # Alembic narrates every plugin and migration step at INFO on each start: `-v` is for ours.
    logging.getLogger("alembic").setLevel(max(logging.WARNING, root.level))


class LogsAbovePrompt:
    """While a terminal prompt is shown: the log's lines written to ``out`` (prompt_toolkit's
    patched stdout, which prints them above the prompt and redraws it) instead of straight to
    stderr, where they would land in the middle of what is being typed."""

    def __init__(self, out) -> None:  # noqa: ANN001 - any text stream
        self.out = out
        self.saved: list[tuple[logging.StreamHandler, object]] = []

    def __enter__(self) -> LogsAbovePrompt:
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.StreamHandler) and not isinstance(
                handler, logging.FileHandler
            ):
                # Swapped without setStream's flush: the old stream may be closed (a test's
                # captured stderr), which must not stop the prompt from starting.
                with handler.lock or nullcontext():
                    self.saved.append((handler, handler.stream))
                    handler.stream = self.out
        return self

    def __exit__(self, *exc: object) -> None:
        for handler, stream in self.saved:
            with handler.lock or nullcontext():
                handler.stream = stream
        self.saved.clear()
