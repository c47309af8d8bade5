"""The index lifecycle (issue 21): one fit at a time, answers from the last complete index while
another is made, papers stored by another process appended without a refit, a restart that loads.

Fits are counted by wrapping ``build_index``; builds in progress are held open with events, so
nothing here waits on the clock (a timeout only bounds how long a broken build can hang a test).
"""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace

import pytest

import digest.index.lifecycle as index_store
from bot.adapters.discord import choices
from bot.runtime.index_work import IndexRefresher
from digest.ingest.parse import make_record
from digest.papers.service import PaperService
from digest.rank.index import build_index
from digest.store import Store
from tests.support.corpus import synthetic_records

HANG = 20  # seconds a broken build may hold a test before it fails instead of hanging


def novel(pid: str = "new-1", word: str = "zeolitic") -> object:
    """A paper whose title and abstract use a word no stored paper uses."""
    return make_record(
        source="jsonl",
        id=pid,
        title=f"Message passing over {word} frameworks",
        abstract=f"Graph neural networks predict {word} framework stability with message passing.",
        authors=["Ada Lovelace"],
        year=2025,
    )


class Fits:
    """Counts full fits; ``hold`` keeps each fit open until ``release`` is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, hold: bool = False) -> None:
        self.count = 0
        self.entered = threading.Event()
        self.release = threading.Event()
        self.hold = hold
        monkeypatch.setattr(index_store, "build_index", self)

    def __call__(self, docs, params=None):
        self.count += 1
        self.entered.set()
        if self.hold:
            assert self.release.wait(HANG), "the held fit was never released"
        return build_index(docs, params)


class ArrivalLock:
    """A lock that tells when a second caller asks for it while it is held."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.waiting = threading.Event()

    def __enter__(self) -> None:
        if self.lock.locked():
            self.waiting.set()
        self.lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self.lock.release()

    def locked(self) -> bool:
        return self.lock.locked()


def in_thread(fn, *args) -> tuple[threading.Thread, list]:
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn(*args)), daemon=True)
    t.start()
    return t, out


def ids(view) -> list[str]:
    return [h.paper_id for h in view.result.hits]


@pytest.fixture
def db(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'lib.db'}")
    store.papers.upsert(synthetic_records(per_topic=10))
    yield store
    store.close()


def service(store: Store, folder) -> PaperService:
    return PaperService(store, folder)


def test_two_concurrent_searches_during_a_build_cause_one_fit(db, tmp_path, monkeypatch):
    """Breaks that turn this red: no single flight (no refresh lock and no fit lock: the second
    search fits too, 2 fits)."""
    fits = Fits(monkeypatch, hold=True)
    papers = service(db, tmp_path / "ix")
    papers.indexes._flight = arrival = ArrivalLock()
    first, out1 = in_thread(papers.search, "message passing graphs")
    assert fits.entered.wait(HANG)
    second, out2 = in_thread(papers.search, "message passing graphs")

    # The fit is released once the second search is waiting for it (or, broken, fitting too).
    def release() -> None:
        while not (arrival.waiting.is_set() or fits.count > 1):
            arrival.waiting.wait(0.01)
        fits.release.set()

    release()
    first.join(HANG), second.join(HANG)
    assert fits.count == 1
    assert ids(out1[0]) == ids(out2[0]) and ids(out1[0])


def test_two_replicas_on_separate_folders_fit_once(db, tmp_path, monkeypatch):
    """Two replicas (separate stores and index stores, as two processes have) on one database,
    each with its own index folder (as the replicas' compose file gives them): the fit is
    claimed in the database, so one fits and the other waits and loads what it stored.

    Breaks that turn this red: no single flight; no fit claim (both fit); the replica that lost
    the claim not loading the stored base (it fits again)."""
    fits = Fits(monkeypatch, hold=True)
    other = Store.open(db.engine.url.render_as_string(hide_password=False))
    a, b = service(db, tmp_path / "a"), service(other, tmp_path / "b")
    t1, _ = in_thread(a.indexes.refresh)
    assert fits.entered.wait(HANG)  # replica A holds the claim and fits
    lost, claim = threading.Event(), b.indexes.parts.claim

    def announced(key, *args):
        got = claim(key, *args)
        if got is None and ":fit:" in key:
            lost.set()
        return got

    monkeypatch.setattr(b.indexes.parts, "claim", announced)
    t2, out = in_thread(b.indexes.refresh)
    while not (lost.is_set() or fits.count > 1):  # B finds the fit claimed (or, broken, fits)
        lost.wait(0.01)
    fits.release.set()
    t1.join(HANG), t2.join(HANG)
    assert fits.count == 1 and len(out[0]) == 76
    assert b.indexes.fits == 0 and b.indexes.loads == 1
    other.close()


def test_a_search_during_a_rebuild_answers_from_the_old_index(db, tmp_path, monkeypatch):
    """Breaks that turn this red: a running bot's search waiting on the refit (current() taking
    the fit lock)."""
    papers = service(db, tmp_path / "ix")
    papers.indexes.serving = True
    papers.indexes.tick()  # the first index
    old = papers.indexes.index
    papers.indexes.invalidate()  # texts changed: a refit is due
    fits = Fits(monkeypatch, hold=True)
    refit, _ = in_thread(papers.indexes.tick)
    assert fits.entered.wait(HANG)
    search, out = in_thread(papers.search, "message passing graphs")
    search.join(HANG)
    answered = not search.is_alive()
    fits.release.set()
    refit.join(HANG)
    assert answered, "the search waited for the refit"
    assert ids(out[0]) and fits.count == 1
    assert papers.ranker().index is papers.indexes.index is not old  # swapped in when done


def test_paper_stored_by_another_process_is_found_after_one_refresh_without_a_refit(
    db, tmp_path, monkeypatch
):
    """Another process (its own Store on the same database) stores a paper; one refresher round
    (driven here, every REFRESH_SECONDS in a bot) makes it searchable, and a
    digest taking candidates up to its sequence ranks it, with no full fit.

    Breaks that turn this red: the delta segment ignored (no papers after the index's ingest
    sequence appended); refit on every new paper (a fit per refresh); a digest ranking with an
    index older than its ``upto`` (``covering`` ignored)."""
    papers = service(db, tmp_path / "ix")
    papers.indexes.serving = True
    papers.indexes.tick()
    fits = Fits(monkeypatch)
    other = Store.open(db.engine.url.render_as_string(hide_password=False))
    other.papers.upsert([novel("new-1")])
    assert "new-1" not in ids(papers.search("zeolitic"))  # served from the index at hand
    papers.indexes.tick()
    assert ids(papers.search("zeolitic"))[:1] == ["new-1"]
    other.papers.upsert([novel("new-2", "perovskite")])
    upto = db.papers.max_seq()
    assert "new-2" in papers.ranker(covering=upto).index.pos  # a digest waits for its upto
    assert fits.count == 0
    other.close()


def test_a_restart_loads_the_saved_index_and_appends_what_came_since(db, tmp_path, monkeypatch):
    """Breaks that turn this red: the saved index not used at start (a fit)."""
    folder = tmp_path / "ix"
    service(db, folder).search("graphs")  # fits and saves
    db.papers.upsert([novel("new-1")])  # stored while no bot ran
    fits = Fits(monkeypatch)
    restarted = Store.open(db.engine.url.render_as_string(hide_password=False))
    papers = service(restarted, folder)
    papers.indexes.serving = True
    papers.indexes.tick()  # the refresher's first round at start
    assert fits.count == 0 and len(papers.indexes.index) == 77
    assert ids(papers.search("zeolitic"))[:1] == ["new-1"]
    restarted.close()


@pytest.mark.asyncio
async def test_autocomplete_answers_while_the_first_index_is_being_built(db, tmp_path, monkeypatch):
    """Breaks that turn this red: autocomplete searching through a build (it waits for the fit,
    the search budget runs out, nothing is offered); no title look-up when no index is ready;
    no overall answer budget (a stuck database read hangs the answer)."""
    fits = Fits(monkeypatch, hold=True)
    papers = service(db, tmp_path / "ix")
    deps = SimpleNamespace(channels=SimpleNamespace(papers=papers))
    refresher = IndexRefresher(papers.indexes, every=3600)
    refresher.start()  # a cold start with nothing saved: the refresher fits
    try:
        assert fits.entered.wait(HANG)
        offered = await asyncio.wait_for(choices.paper_choices(deps, "part 3"), HANG)
        assert offered and all("part 3" in c.name for c in offered)
        assert papers.indexes.index is None  # still building: the titles answered
    finally:
        fits.release.set()
        refresher.stop()

    stuck = threading.Event()
    monkeypatch.setattr(db.papers, "get", lambda pid: stuck.wait(HANG))
    monkeypatch.setattr(choices, "ANSWER_BUDGET", 0.2)
    try:
        assert await asyncio.wait_for(choices.paper_choices(deps, "part 3"), HANG) == []
    finally:
        stuck.set()


def test_while_another_process_makes_a_segment_a_bot_answers_and_writes_nothing(db, tmp_path):
    """While another process holds the claim on the next segment, a running bot's refresh
    neither waits nor computes it (it answers from the index it has); a digest that needs those
    papers now gets them appended in memory; nothing is written.

    Breaks that turn this red: a refresh waiting for the claim (it hangs); the segment computed
    by a bot that did not claim it (a second copy of the work); the papers a digest needs left
    out (``need`` ignored)."""
    papers = service(db, tmp_path / "ix")
    papers.indexes.serving = True
    papers.indexes.tick()
    parts = db.index_parts.sizes(index_store.FORMAT)
    db.papers.upsert([novel("new-1")])
    stored = papers.indexes._stored
    key = f"{index_store.FORMAT}:segment:{papers.indexes._base.id}:{stored.seq}"
    assert db.index_parts.claim(key, "another-process", 60) is not None
    refresh, _ = in_thread(papers.indexes.refresh)
    refresh.join(HANG)
    assert not refresh.is_alive(), "the refresh waited for another process's claim"
    assert "new-1" not in papers.indexes.index.pos and papers.indexes.appends == 0
    index = papers.indexes.current(covering=db.papers.max_seq())
    assert "new-1" in index.pos and papers.indexes.appends == 1  # in memory, for the digest
    assert db.index_parts.sizes(index_store.FORMAT) == parts


def test_papers_stored_during_a_long_refit_are_appended_meanwhile(db, tmp_path, monkeypatch):
    """A running bot's refresher keeps appending new papers while a refit runs behind it, and
    the refit swapped in still holds them.

    Breaks that turn this red: the refit run on the refresher's own thread (rounds stop until
    it ends); the refit swapped in without the papers stored during it."""
    papers = service(db, tmp_path / "ix")
    refresher = IndexRefresher(papers.indexes)
    papers.indexes.serving = True
    refresher.round()
    papers.indexes.invalidate()  # a refit is due
    fits = Fits(monkeypatch, hold=True)
    refresher.round()  # starts the refit
    assert fits.entered.wait(HANG)
    db.papers.upsert([novel("new-1")])
    second, _ = in_thread(refresher.round)
    second.join(HANG)
    appended = not second.is_alive() and "new-1" in papers.indexes.index.pos
    fits.release.set()
    refresher.refitter.join(HANG)
    assert appended, "no round appended the new paper while the refit ran"
    assert fits.count == 1 and "new-1" in papers.indexes.index.pos
    assert ids(papers.search("zeolitic"))[:1] == ["new-1"]
