"""The Zotero flows end to end at the console, against the strict fake Zotero API."""

from __future__ import annotations

from bot.cli.library import handle_console
from digest.models import ChannelRef, SubscriptionKind
from tests.support.corpus import synthetic_records
from tests.zotero.conftest import KEY, USER_LIB, answers, console_ctx

ME = ChannelRef("console", "@ann")


def likes(app, ref=ME) -> set[str]:
    channel = app.channels.lookup.get(ref)
    if channel is None:
        return set()
    return {
        s.text
        for s in app.channels.lookup.subscriptions(channel.id)
        if s.kind is SubscriptionKind.LIKE
    }


def connect(app, key: str = KEY):
    ask = answers("475425", key)
    reply = handle_console(app.commands, "me zotero connect", console_ctx(), ask=ask)
    return reply, ask


def test_connect_prompts_without_echo_and_syncs_the_library(zapp, zotero_fake):
    """Breaks that turn this red: the key field asked with echo (secret False); the key stored
    in the clear; sync not run on connect; items not turned into likes."""
    stored = synthetic_records()[0]
    zotero_fake.add_item(USER_LIB, itemType="journalArticle", title=stored.title, creators=[])
    reply, ask = connect(zapp)
    assert not reply.error, reply.text
    assert ask.asked == [("Zotero user id (or group:ID)", False), ("Zotero API key", True)]
    assert "1 `like:` interest added" in reply.text
    assert stored.id in likes(zapp)
    row = zapp.store.zotero.get("console", "", "ann")
    assert row is not None and KEY not in row.key_encrypted


def item(title: str, **more):
    return {"itemType": "journalArticle", "title": title, "creators": [], **more}


def sync(app):
    return handle_console(app.commands, "me zotero sync", console_ctx())


def test_sync_is_incremental_and_items_deleted_in_zotero_stop_being_interests(zapp, zotero_fake):
    """Breaks that turn this red: no If-Modified-Since-Version sent (or the version not
    remembered: the second sync reads every item again); `/deleted` not read, or its keys not
    unfollowed; a like the person had before sync removed with the item."""
    papers = synthetic_records()
    a = zotero_fake.add_item(USER_LIB, **item(papers[0].title))
    zotero_fake.add_item(USER_LIB, **item(papers[1].title))
    assert not connect(zapp)[0].error
    assert {papers[0].id, papers[1].id} <= likes(zapp)
    seen = zapp.store.zotero.get("console", "", "ann").version
    assert seen == zotero_fake.library(USER_LIB).version

    zotero_fake.arrived.clear()
    again = sync(zapp)
    assert "nothing changed" in again.text, again.text
    asked = [x for x in zotero_fake.arrived if x.path.endswith("/items")]
    assert asked[0].headers["if-modified-since-version"] == str(seen)
    assert len(zotero_fake.arrived) == 1  # a 304: nothing else read

    c = zotero_fake.add_item(USER_LIB, **item(papers[2].title))
    zotero_fake.delete_item(USER_LIB, a)
    zotero_fake.arrived.clear()
    reply = sync(zapp)
    assert "1 item read" in reply.text and "1 removed" in reply.text, reply.text
    read = [x for x in zotero_fake.arrived if "itemKey" in x.query]
    assert read[0].query["itemKey"] == [c]  # only the changed item
    deleted = [x for x in zotero_fake.arrived if x.path.endswith("/deleted")]
    assert deleted[0].query["since"] == [str(seen)]
    assert papers[0].id not in likes(zapp) and papers[2].id in likes(zapp)


def test_a_like_the_person_had_before_stays_when_its_item_is_deleted(zapp, zotero_fake):
    """Breaks that turn this red: unfollow drops every like of a deleted item, not only those
    sync added."""
    p = synthetic_records()[3]
    handle_console(zapp.commands, f"me subscribe like:{p.id}", console_ctx())
    assert p.id in likes(zapp)
    k = zotero_fake.add_item(USER_LIB, **item(p.title))
    assert not connect(zapp)[0].error
    zotero_fake.delete_item(USER_LIB, k)
    sync(zapp)
    assert p.id in likes(zapp)


def test_429_and_backoff_are_honoured(zapp, zotero_fake):
    """Breaks that turn this red: pyzotero's own handling kept (it sleeps, or goes on with the
    429's body); Retry-After not remembered (the next sync calls Zotero at once); a Backoff
    header on a success ignored."""
    assert not connect(zapp)[0].error
    zotero_fake.add_item(USER_LIB, **item("Something new"))
    zotero_fake.rate_limit(retry_after=600)
    reply = sync(zapp)
    assert reply.error and "wait" in reply.text and "10 minutes" in reply.text, reply.text
    zotero_fake.arrived.clear()
    again = sync(zapp)
    assert again.error and "wait" in again.text
    assert zotero_fake.arrived == []  # nothing sent before the time Zotero named
    conn = zapp.store.zotero.get("console", "", "ann")
    zapp.store.zotero.set(conn.id, backoff_until=None)
    zotero_fake.backoff = 120
    zotero_fake.arrived.clear()
    heard = sync(zapp)
    assert heard.error and "2 minutes" in heard.text, heard.text
    assert len(zotero_fake.arrived) == 1  # the answer carrying Backoff was the last request
    zotero_fake.backoff = None
    zotero_fake.arrived.clear()
    assert sync(zapp).error
    assert zotero_fake.arrived == []


def test_without_a_secret_key_connect_is_refused_in_one_line(tmp_path, zotero_fake):
    """Breaks that turn this red: the key stored without a secret (in the clear), or the form
    opened anyway."""
    from tests.zotero.conftest import build_app

    app = build_app(f"sqlite:///{tmp_path / 'n.db'}", tmp_path, zotero_fake, secret=None)
    try:
        reply, ask = connect(app)
        assert reply.error and "DIGESTBOT_SECRET_KEY" in reply.text
        assert "\n" not in reply.text
        assert ask.asked == []  # not even asked for the key
        assert app.store.zotero.all() == []
    finally:
        app.close()


def test_disconnect_deletes_the_key(zapp, zotero_fake):
    """Breaks that turn this red: disconnect keeps the row (and the sealed key)."""
    assert not connect(zapp)[0].error
    reply = handle_console(zapp.commands, "me zotero disconnect", console_ctx())
    assert not reply.error and "deleted" in reply.text
    assert zapp.store.zotero.all() == []
    with zapp.store.engine.connect() as conn:
        from sqlalchemy import text

        assert conn.execute(text("SELECT count(*) FROM zotero_connections")).scalar() == 0


def test_a_key_typed_into_the_command_is_refused(zapp, zotero_fake):
    """Breaks that turn this red: `connect ID KEY` typed as text accepted (the key then sits in
    the platform's command history)."""
    reply = handle_console(zapp.commands, f"me zotero connect 475425 {KEY}", console_ctx())
    assert reply.error and KEY not in reply.text
    assert zapp.store.zotero.all() == []


def test_a_first_sync_zotero_refuses_still_leaves_the_library_connected(zapp, zotero_fake):
    """Breaks that turn this red: the first sync's 429 turned into a failed connect (the key
    checked, then forgotten), or its wait not remembered."""
    zotero_fake.add_item(USER_LIB, **item("Anything"))
    zotero_fake.rate_limit(retry_after=120, after=1)  # the key check passes, the sync is refused
    reply, _ = connect(zapp)
    assert not reply.error and "Connected" in reply.text and "did not run" in reply.text
    conn = zapp.store.zotero.get("console", "", "ann")
    assert conn is not None and conn.backoff_until is not None and conn.version == 0
