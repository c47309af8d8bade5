"""The bulk claim (digest/store/batch.py) stores what it was given, on both backends: PostgreSQL
gets the rows as one JSON parameter (json_to_recordset), SQLite as an executemany, and the one
rule holds for both: a day already claimed, or a paper already reserved for the channel, means
that digest is not claimed and leaves nothing behind.

Deliberate breaks tried (each made this test go red on PostgreSQL):
- the JSON rows' column types left out (every column read as text): the insert fails
- ``ON CONFLICT DO NOTHING`` dropped from the items' insert: the claim fails whole (unique
  channel + paper) instead of leaving one digest out
- ``_iso`` writing timestamps without their offset: claimed_at moved by the session's zone
  offset (the test sets a zone other than UTC for this)
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from sqlalchemy import event, select

from digest.models import ChannelRef, SubscriptionKind
from digest.store.batch import NewClaim
from digest.store.deliveries import EMPTY, SENDING, ItemClaim
from digest.store.ledger import PLANNED
from digest.store.schema import DeliveryItemRow
from tests.conftest import make_app

DAY = date(2026, 12, 3)
#: What a rendering may hold: quotes, backslashes, newlines, non-Latin text, an emoji, braces.
RENDERED = '{"text": "Ünïcode \\"quoted\\" \\\\ back\\nslash — 論文 👍 {braces}"}'


def _kolkata(dbapi_conn, _record) -> None:  # noqa: ANN001 - SQLAlchemy's event signature
    dbapi_conn.execute("SET TIME ZONE 'Asia/Kolkata'")
    dbapi_conn.commit()


def test_the_bulk_claim_stores_its_rows_and_leaves_out_what_is_taken(db_url, tmp_path):
    app = make_app(db_url, tmp_path)
    if app.store.engine.dialect.name == "postgresql":  # a session zone that is not UTC: a
        event.listen(app.store.engine, "connect", _kolkata)  # time without offset would move
        app.store.engine.dispose()
    ids = app.store.papers.recent_ids(12)
    channels = []
    for name in ("fresh", "taken-day", "taken-paper", "quiet"):
        ref = ChannelRef("console", name)
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
        channels.append(app.store.channels.get(ref).id)
    fresh, taken_day, taken_paper, quiet = channels
    assert app.store.deliveries.claim(taken_day, DAY, "other", [ItemClaim(ids[9], 1, 0.5, "")])
    earlier = DAY - timedelta(days=1)
    assert app.store.deliveries.claim(
        taken_paper, earlier, "other", [ItemClaim(ids[5], 1, 0.5, "")]
    )

    def items(first: int) -> tuple[ItemClaim, ...]:
        return tuple(
            ItemClaim(ids[first + n], n + 1, 0.1234567890123 * (n + 1), f"why «{n}» 👍")
            for n in range(3)
        )

    def new(channel_id: int, its: tuple[ItemClaim, ...], quiet_: bool = False) -> NewClaim:
        parts = ((), (its[0].paper_id, its[1].paper_id)) if its else ()
        return NewClaim(
            channel_id=channel_id,
            day=DAY,
            items=its,
            near_misses=4,
            quiet=quiet_,
            upto_seq=77,
            parts=parts,
            rendered=RENDERED,
        )

    claims = [
        new(fresh, items(0)),
        new(taken_day, items(6)),
        new(taken_paper, items(3)),
        new(quiet, (), quiet_=True),
    ]
    before = datetime.now(UTC) - timedelta(minutes=5)
    got = app.store.batch.claim(claims, "w1", lease_s=120, grace_s=3600)
    assert set(got) == {fresh, quiet}

    d = app.store.deliveries.get(got[fresh].delivery_id)
    assert (d.channel_id, d.digest_date, d.status.value) == (fresh, DAY, SENDING)
    assert (d.claimed_by, d.fence, d.near_misses, d.upto_seq, d.attempts) == ("w1", 1, 4, 77, 0)
    assert before < d.claimed_at < datetime.now(UTC) + timedelta(minutes=5)
    assert d.claimed_at == got[fresh].claimed_at
    assert app.store.ledger.rendered(d.id) == RENDERED
    assert d.items == items(0)  # paper, rank, score (to the last digit) and why, as given
    with app.store.engine.connect() as conn:
        rows = conn.execute(
            select(DeliveryItemRow.paper_id, DeliveryItemRow.position, DeliveryItemRow.message_ref)
            .where(DeliveryItemRow.delivery_id == d.id)
            .order_by(DeliveryItemRow.rank)
        ).all()
    assert [tuple(r) for r in rows] == [(ids[0], 1, None), (ids[1], 1, None), (ids[2], None, None)]
    plan = app.store.ledger.messages(d.id)
    assert [(m.position, m.paper_ids, m.status, m.message_ref) for m in plan] == [
        (0, (), SENDING, None),
        (1, (ids[0], ids[1]), PLANNED, None),
    ]

    empty = app.store.deliveries.get(got[quiet].delivery_id)
    assert empty.status.value == EMPTY and empty.items == ()
    assert app.store.ledger.rendered(empty.id) is None and app.store.ledger.messages(empty.id) == []

    # Left out whole: the day another claim has keeps its one paper; the raced digest is gone.
    assert [i.paper_id for i in app.store.deliveries.for_day(taken_day, DAY).items] == [ids[9]]
    assert app.store.deliveries.for_day(taken_paper, DAY) is None
    assert app.store.deliveries.delivered_paper_ids(taken_paper) == {ids[5]}
    app.close()


def test_a_score_json_cannot_carry_does_not_refuse_the_tick(db_url, tmp_path):
    """A NaN score (never expected from the ranker) is stored as 0, and the rest of the tick's
    claims go through: on PostgreSQL the rows travel as JSON, which has no NaN.

    Break tried: storing the score as given (PostgreSQL refuses the whole claim: red)."""
    app = make_app(db_url, tmp_path)
    ids = app.store.papers.recent_ids(4)
    refs = [ChannelRef("console", n) for n in ("a", "b")]
    for ref in refs:
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    a, b = (app.store.channels.get(r).id for r in refs)
    claims = [
        NewClaim(
            channel_id=a,
            day=DAY,
            items=(ItemClaim(ids[0], 1, float("nan"), ""),),
            near_misses=0,
            quiet=False,
            upto_seq=1,
            parts=((),),
            rendered="{}",
        ),
        NewClaim(
            channel_id=b,
            day=DAY,
            items=(ItemClaim(ids[1], 1, 0.5, ""),),
            near_misses=0,
            quiet=False,
            upto_seq=1,
            parts=((),),
            rendered="{}",
        ),
    ]
    got = app.store.batch.claim(claims, "w1", lease_s=120, grace_s=3600)
    assert set(got) == {a, b}
    assert [i.score for i in app.store.deliveries.get(got[a].delivery_id).items] == [0.0]
