"""Item 8 at the store level, on each backend: the first process to record a request key handles
it, every other process (another engine on the same database) sees it as seen.

Break tried: SeenRequests keeping keys in process memory (the second engine says first_time: red).
"""

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from bot.adapters.slack.bolt_middleware import SeenRequests, request_key, seen_requests
from digest.store import Store


def test_a_key_is_claimed_once_across_processes_and_old_keys_are_purged(store, db_url):
    one, other = SeenRequests(store.engine, purge_every=2), SeenRequests(Store.open(db_url).engine)
    assert one.first_time("event:Ev1") and not other.first_time("event:Ev1")
    assert not one.first_time("event:Ev1") and other.first_time("event:Ev2")
    with store.engine.begin() as conn:
        conn.execute(
            seen_requests.insert().values(
                key="event:old", seen_at=datetime.now(UTC) - timedelta(days=2)
            )
        )
    assert one.first_time("event:Ev3")  # the second insert of `one`: purges keys older than a day
    with store.engine.connect() as conn:
        keys = set(conn.scalars(select(seen_requests.c.key)))
    assert keys == {"event:Ev1", "event:Ev2", "event:Ev3"}
    other.engine.dispose()


def test_request_keys():
    assert request_key({"type": "event_callback", "event_id": "Ev9"}) == "event:Ev9"
    assert request_key({"command": "/papers", "trigger_id": "t1"}) == "command:t1"
    press = {"type": "block_actions", "trigger_id": "t2", "actions": [{"action_ts": "1.5"}]}
    assert request_key(press) == "action:t2:1.5"
    assert request_key({"type": "url_verification"}) is None
