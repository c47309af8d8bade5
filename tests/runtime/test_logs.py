"""Structured logs: chat ids as fields, never a token, never the text users type."""

import json
import logging

from bot.commands import Context
from bot.logs import JsonFormatter, redact
from digest.models import ChannelRef, SubscriptionKind


def test_json_lines_carry_chat_ids_and_redact_tokens():
    record = logging.LogRecord(
        "bot.runtime.runner",
        logging.INFO,
        __file__,
        1,
        "posting with xoxb-123-456-abc failed",
        (),
        None,
    )
    record.platform, record.workspace, record.channel = "slack", "T1", "C9"
    line = json.loads(JsonFormatter().format(record))
    assert line["platform"] == "slack" and line["workspace"] == "T1" and line["channel"] == "C9"
    assert "xoxb" not in line["msg"] and "[redacted]" in line["msg"]
    assert (
        redact("MTAxMjM0NTY3ODkwMTIzNDU2Nzg5.GaBcDe.abcdefghijklmnopqrstuvwxyz0123") == "[redacted]"
    )


def test_a_failing_command_logs_where_but_not_what_was_typed(app, caplog, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("bug")

    # A channel someone set up: `list` in one nobody did answers before reading anything.
    app.channels.follows.add(ChannelRef("slack", "C1", "T1"), SubscriptionKind.TOPIC, "graphs")
    monkeypatch.setattr(app.commands.channels, "subscriptions", boom)
    secret_text = "subscribe my secret research plan"
    with caplog.at_level(logging.ERROR):
        reply = app.commands.handle(
            "list " + secret_text, Context(ref=ChannelRef("slack", "C1", "T1"), user="U1")
        )
    assert reply.error and "Something went wrong" in reply.text
    logged = " ".join(r.getMessage() + str(r.exc_info) for r in caplog.records)
    assert "C1" in logged and "secret research plan" not in logged
