"""`/papers save <id>` at the console: one item per paper in the `digestbot` collection."""

from __future__ import annotations

import json

import httpx

from bot.cli.library import handle_console
from digest.ingest.parse import make_record
from digest.models import Links
from tests.fakes.zotero import FakeZotero
from tests.support.corpus import synthetic_records
from tests.zotero.conftest import KEY, USER_LIB, answers, console_ctx

ARXIV = "2401.01234"


def arxiv_paper(app):
    rec = make_record(
        source="arxiv",
        id=ARXIV,
        title="Sparse autoencoders find monosemantic features",
        abstract="We train sparse autoencoders on activations and find interpretable features.",
        authors=["Ada Lovelace", "Turing, Alan"],
        year=2024,
        links=Links(abs=f"https://arxiv.org/abs/{ARXIV}", pdf=f"https://arxiv.org/pdf/{ARXIV}"),
    )
    app.store.papers.upsert([rec])
    return app.papers.paper(ARXIV)


def connected(app):
    reply = handle_console(
        app.commands, "me zotero connect", console_ctx(), ask=answers("475425", KEY)
    )
    assert not reply.error, reply.text


def save(app, pid: str):
    return handle_console(app.commands, f"save {pid}", console_ctx())


def created(fake: FakeZotero) -> list[dict]:
    return [
        o
        for a in fake.arrived
        if a.method == "POST" and a.path.endswith("/items") and a.status == 200
        for o in json.loads(a.body)
    ]


def test_an_arxiv_paper_is_saved_once_as_a_preprint_in_the_digestbot_collection(zapp, zotero_fake):
    """Breaks that turn this red: journalArticle for an arXiv paper, or a field preprint lacks
    (the fake refuses it, 400); the collection created on each save; saving twice makes two
    items (no look-up by URL/arXiv id); no If-Unmodified-Since-Version on the write."""
    arxiv_paper(zapp)
    connected(zapp)
    first = save(zapp, ARXIV)
    assert not first.error and "Saved" in first.text, first.text
    lib = zotero_fake.library(USER_LIB)
    [coll] = lib.collections.values()
    assert coll["name"] == "digestbot"
    [sent] = created(zotero_fake)
    assert sent["itemType"] == "preprint"
    assert sent["archiveID"] == f"arXiv:{ARXIV}" and sent["url"].endswith(ARXIV)
    assert sent["creators"][0] == {
        "creatorType": "author",
        "firstName": "Ada",
        "lastName": "Lovelace",
    }
    assert sent["collections"] == [coll["key"]] and sent["abstractNote"]
    writes = zotero_fake.writes()
    assert all("if-unmodified-since-version" in w.headers for w in writes)

    again = save(zapp, ARXIV)
    assert not again.error and "already" in again.text, again.text
    assert len([i for i in lib.items.values() if i.get("itemType") == "preprint"]) == 1
    assert len(lib.collections) == 1


def test_a_paper_without_arxiv_id_is_a_journal_article(zapp, zotero_fake):
    """Breaks that turn this red: the item type or its fields wrong for a non-arXiv paper."""
    p = synthetic_records()[0]
    connected(zapp)
    reply = save(zapp, p.id)
    assert not reply.error, reply.text
    [sent] = created(zotero_fake)
    assert sent["itemType"] == "journalArticle" and sent["title"] == p.title
    assert f"digestbot id {p.id}" in sent["extra"]


def test_a_version_conflict_is_read_again_and_retried_once(zapp, zotero_fake):
    """Breaks that turn this red: a 412 ends the save (no retry), or the retry sends the same
    stale version; two conflicts in a row retried forever."""
    arxiv_paper(zapp)
    connected(zapp)
    zotero_fake.race_next_write()  # someone else writes just before the first write
    reply = save(zapp, ARXIV)
    assert not reply.error, reply.text
    statuses = [w.status for w in zotero_fake.writes()]
    assert statuses == [412, 200, 200]  # the collection lost once, then it and the item went
    guards = [w.headers["if-unmodified-since-version"] for w in zotero_fake.writes()]
    assert guards[0] != guards[1]  # the retry carries the version read again

    p = synthetic_records()[1]
    zotero_fake.race_next_write(times=5)
    stuck = save(zapp, p.id)
    assert stuck.error and "412" in stuck.text
    assert "\n" not in stuck.text


def test_save_without_a_connection_or_of_an_unknown_paper_says_so(zapp, zotero_fake):
    """Breaks that turn this red: a traceback or generic error instead of the one line."""
    r = save(zapp, synthetic_records()[0].id)
    assert r.error and "zotero connect" in r.text
    connected(zapp)
    r = save(zapp, "no-such-paper")
    assert r.error and "No paper" in r.text


def test_the_fake_refuses_what_zotero_refuses(zotero_fake):
    """Breaks that turn this red (in the fake): any key accepted; a stale or malformed version
    accepted; unknown types or fields stored; 51 objects in one write stored."""
    base = f"{zotero_fake.url}/{USER_LIB}"
    ok = {"Zotero-API-Key": KEY}
    with httpx.Client() as c:
        assert c.get(f"{base}/items").status_code == 403
        assert c.get(f"{base}/items", headers={"Zotero-API-Key": "x" * 24}).status_code == 403
        v = int(c.get(f"{base}/items", headers=ok).headers["Last-Modified-Version"])
        item = {"itemType": "journalArticle", "title": "T"}

        def post(objs, version):
            h = ok | {"If-Unmodified-Since-Version": str(version)}
            return c.post(f"{base}/items", headers=h, content=json.dumps(objs))

        assert post([item], "abc").status_code == 400
        assert post([item], v + 7).status_code == 412
        assert post([item] * 51, v).status_code == 413
        r = post([{"itemType": "paper", "title": "T"}, item | {"publisher": "X"}], v).json()
        assert set(r["failed"]) == {"0", "1"} and r["failed"]["0"]["code"] == 400
        assert c.get(f"{base}/deleted", headers=ok).status_code == 400  # no since=
        zotero_fake.rate_limit(retry_after=9)
        limited = c.get(f"{base}/items", headers=ok)
        assert limited.status_code == 429 and limited.headers["Retry-After"] == "9"
