"""A Zotero API key is in no log line (any level, any logger), no export and no error reply."""

from __future__ import annotations

import logging

from bot.cli.library import handle_console
from bot.logs import JsonFormatter, RedactingFormatter, redact
from digest.transfer.portable import dumps, export_state
from tests.support.corpus import synthetic_records
from tests.zotero.conftest import KEY, USER_LIB, answers, console_ctx

WRONG = "WrongKeyWrongKeyWrongKey"  # well formed, not granted: Zotero says 403


def test_the_key_is_in_no_log_line_export_or_error(zapp, zotero_fake, caplog):
    """Breaks that turn this red: the key in a log message (e.g. logging the client or the
    connection row), in a pyzotero error passed through as the reply, in the exported JSON
    (zotero tables exported, with or without secret tables), or stored in the clear."""
    caplog.set_level(logging.DEBUG)  # every logger, every level: httpx and pyzotero included
    p = synthetic_records()[0]
    zotero_fake.add_item(USER_LIB, itemType="journalArticle", title=p.title, creators=[])
    replies = []
    for key in (WRONG, KEY):
        ask = answers("475425", key)
        replies.append(handle_console(zapp.commands, "me zotero connect", console_ctx(), ask=ask))
    assert replies[0].error and "403" in replies[0].text
    assert not replies[1].error, replies[1].text
    zotero_fake.rate_limit(retry_after=60)
    zotero_fake.add_item(USER_LIB, itemType="journalArticle", title="New", creators=[])
    for line in ("me zotero sync", f"save {p.id}", "me zotero status", "save nope"):
        replies.append(handle_console(zapp.commands, line, console_ctx()))
    conn = zapp.store.zotero.get("console", "", "ann")
    zapp.store.zotero.set(conn.id, backoff_until=None)
    zotero_fake.grant(KEY, "groups/1", write=False)  # read-only: a save is refused (403)
    replies.append(
        handle_console(
            zapp.commands, "me zotero connect", console_ctx(), ask=answers("group:1", KEY)
        )
    )
    replies.append(handle_console(zapp.commands, f"save {p.id}", console_ctx()))
    assert replies[-1].error and "403" in replies[-1].text, replies[-1].text

    for r in replies:
        assert KEY not in r.text and WRONG not in r.text
    # all levels, raw and as both formatters write them (tracebacks included)
    for rec in caplog.records:
        for text in (
            rec.getMessage(),
            JsonFormatter().format(rec),
            RedactingFormatter("%(message)s").format(rec),
        ):
            assert KEY not in text and WRONG not in text, text
    doc = dumps(export_state(zapp.store, ("slack_installations", "slack_bots")))
    assert KEY not in doc and "zotero" not in doc
    with zapp.store.engine.connect() as c:
        from sqlalchemy import text

        stored = c.execute(text("SELECT key_encrypted FROM zotero_connections")).scalar()
    assert stored and KEY not in stored
    # and whatever might log it later is redacted, now the process has opened it
    assert KEY not in redact(f"oops {KEY}")
