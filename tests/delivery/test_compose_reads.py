"""Composing one digest reads each row it needs once: channel profile, votes, sent papers, papers.

Counted with SQLAlchemy's before_cursor_execute event on a warm bot (the ranker built), for a
digest with new papers and backlog papers, votes and an earlier delivery: 15 statements before
this fix (net votes read 4 times, subscriptions, sent papers and the paper count twice, every
candidate paper's full row loaded), 9 after; 10 since a digest marks picks 👍'd in other
channels of its workspace (issue 25: one statement for every pick at once).
"""

from __future__ import annotations

from collections import Counter
from datetime import date

from sqlalchemy import event

from digest.delivery.backlog import compose_digest
from digest.delivery.steps import Deliveries
from digest.ingest.parse import make_record
from digest.models import ChannelRef, SubscriptionKind

#: One statement each: paper count (ranker), max sequence, last digest's sequence, new ids,
#: subscriptions, net votes, sent papers, recent ids (backlog pool), the picked papers' rows,
#: the picks' 👍 in the workspace's other channels, and the picks' stored TL;DR lines (read by
#: every process, whatever its LLM settings: docs/tldr.md).
MOST = 11


def test_one_digest_reads_each_thing_once(app):
    """Breaks that turn this red: compose_digest reading the seen papers and service.profile
    again (votes and sent papers read twice); backlog() reading the ranker, profile or
    seen papers itself again; loading every candidate's row (get_many(ids)) before ranking."""
    ref = ChannelRef("console", "lab")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "graph neural networks")
    channel = app.channels.channel(ref)
    channel = app.store.channels.update(channel.id, digest_size=3)
    first = Deliveries(app.papers, "w").claim(channel, date(2026, 11, 30))
    assert first is not None and first.digest.items  # some papers sent: the backlog holds others
    for pid in app.store.papers.recent_ids(3):
        app.store.channels.put_feedback(channel.id, "ann", pid, 1)
    app.store.papers.upsert(
        make_record(
            source="jsonl",
            id=f"new-gnn-{n}",
            title=f"Graph neural networks with message passing, part {n}",
            abstract=f"Graph neural networks (GNNs) and message passing for node classification {n}.",
        )
        for n in range(2)
    )
    compose_digest(app.channels, channel, date(2026, 12, 1))  # warm: the index is fitted
    # A running bot from here on (its refresher keeps the index in step, as `digestbot run`
    # starts it): the index covers the candidates, so the digest reads no stored index part.
    app.papers.indexes.serving = True
    statements: list[str] = []

    def count(_conn, _cursor, sql, *_args) -> None:
        statements.append(" ".join(sql.split())[:90])

    event.listen(app.store.engine, "before_cursor_execute", count)
    try:
        digest = compose_digest(app.channels, channel, date(2026, 12, 1))
    finally:
        event.remove(app.store.engine, "before_cursor_execute", count)
    assert 0 < digest.earlier < len(digest.items), "new papers and backlog papers both"
    repeated = {sql: n for sql, n in Counter(statements).items() if n > 1}
    assert len(statements) <= MOST, (len(statements), repeated or statements)
