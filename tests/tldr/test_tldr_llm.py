"""Abstractive TL;DRs through an OpenAI-compatible endpoint: the local fake (tests/fakes/llm.py),
never the network. Written at ingest, cached per paper and model; a digest never waits for them.

Deliberate breaks that turn these red: `ChatClient.messages` not cutting the abstract (the fake
refuses the oversized paper); `_scrub` returning the text as is (the echoed key reaches the log);
`PaperService.ingest` letting a writer error through (ingest fails); `TldrWriter.write`
ignoring `MAX_FAILURES_IN_A_ROW` (a dead endpoint gets every paper's call); `TldrRepo.current`
ignoring the model (another model's line is shown); `spend` not checking the limit (the day's
budget is passed); `PaperRepo.get` calling the endpoint, or `tldr_line` doing so (the
interactive commands reach the fake); `TldrWriter.after_ingest` writing inline in background
mode (ingest waits for the held answer); `digestbot run` not setting background mode before its
first-run ingest (the first digest shows the held line).
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import UTC, datetime

import httpx
import pytest

from digest import BUNDLED_PAPERS
from digest.tldr.extractive import extractive_tldr
from digest.tldr.llm import ChatClient, LlmConfig, LlmError, answer_line
from digest.tldr.writer import TldrWriter
from tests.fakes.llm import PATH, FakeLlm
from tests.support.cli_proc import digestbot
from tests.tldr.test_tldr import bundled, is_sentence_of

KEY = "sk-test-secret-key"


@pytest.fixture
def llm():
    with FakeLlm(key=KEY) as server:
        yield server


def config(server: FakeLlm, **kw) -> LlmConfig:
    return LlmConfig(url=server.url, model="tiny-tldr", key=KEY, **kw)


def env(server: FakeLlm, **kw: str) -> dict[str, str]:
    return {
        "DIGESTBOT_LLM_URL": server.url,
        "DIGESTBOT_LLM_MODEL": "tiny-tldr",
        "DIGESTBOT_LLM_KEY": KEY,
        **kw,
    }


# --- the fake refuses what the real endpoint refuses --------------------------------------------


def test_the_fake_is_strict(llm):
    url = llm.url + "/chat/completions"
    good = {"model": "tiny-tldr", "messages": [{"role": "user", "content": "hi"}]}
    auth = {"Authorization": f"Bearer {KEY}"}
    assert httpx.post(url, json=good, headers=auth).status_code == 200
    assert httpx.post(url, json=good).status_code == 401
    assert (
        httpx.post(url, json=good, headers={"Authorization": "Bearer sk-wrong"}).status_code == 401
    )
    assert httpx.post(url, json={"messages": good["messages"]}, headers=auth).status_code == 400
    assert httpx.post(url, json={**good, "model": "gpt-9"}, headers=auth).status_code == 404
    assert httpx.post(url, json={**good, "messages": []}, headers=auth).status_code == 400
    big = {**good, "messages": [{"role": "user", "content": "x" * 9000}]}
    refused = httpx.post(url, json=big, headers=auth)
    assert (
        refused.status_code == 400 and refused.json()["error"]["code"] == "context_length_exceeded"
    )
    assert httpx.post(llm.url + "/completions", json=good, headers=auth).status_code == 404


def test_client_gets_a_clean_line_and_cuts_an_oversized_abstract(llm):
    client = ChatClient(config(llm, max_input_chars=6000))
    paper = bundled()[0]
    line = client.tldr(paper, 240)
    assert line.startswith("The authors study") and "TL;DR" not in line
    from dataclasses import replace

    huge = replace(paper, abstract="word " * 5000)  # 25,000 characters: over the fake's context
    assert client.tldr(huge, 240)  # sent cut to max_input_chars, so it is accepted
    sent = llm.calls[-1].body
    assert sent["model"] == "tiny-tldr" and len(sent["messages"][-1]["content"]) < 6200
    assert llm.calls[-1].headers["Authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"key": "sk-wrong"}, "HTTP 401"),
        ({"model": "gpt-9"}, "HTTP 404"),
        ({"max_input_chars": 20_000}, "context length"),
    ],
)
def test_client_says_what_the_endpoint_refused(llm, change, needle):
    cfg = LlmConfig(**{"url": llm.url, "model": "tiny-tldr", "key": KEY, **change})
    from dataclasses import replace

    paper = replace(bundled()[0], abstract="word " * 3000)
    with pytest.raises(LlmError, match=needle):
        ChatClient(cfg).tldr(paper, 240)


def test_answer_line_drops_preamble_and_markup():
    assert answer_line('**TL;DR:** "We do $x^2$ things."\nMore.', 240) == "We do x^2 things."
    assert answer_line("   \n", 240) == ""


# --- writing, caching, budgets -------------------------------------------------------------------


def stored(store):
    store.papers.upsert(bundled())
    return [p.id for p in store.papers.list(50)]


def test_lines_are_cached_per_paper_and_model(llm, store):
    ids = stored(store)
    newest = store.papers.recent_ids(3)  # what a run takes after the ingested ids
    writer = TldrWriter(store, config(llm, per_run=3))
    assert writer.write(newest) == 3 and len(llm.calls) == 3
    assert writer.write(newest) == 0 and len(llm.calls) == 3  # current lines: never asked again
    got = store.papers.get_many(ids)
    assert sorted(i for i, p in got.items() if p.tldr) == sorted(newest)
    assert store.papers.get(newest[0]).tldr.startswith("The authors study")
    # Another model's writer finds them stale (it writes its own); readers still show them.
    assert store.papers.tldrs.stale(newest, "other-model") == newest
    store.papers.tldr_stored = False  # DIGESTBOT_TLDR=extractive
    assert all(p.tldr is None for p in store.papers.get_many(ids).values())
    assert TldrWriter(store, config(llm, per_run=3)).write(newest) == 0  # model unchanged


def test_the_run_and_the_day_budget_hold(llm, store):
    ids = stored(store)
    noon, next_day = datetime(2026, 12, 1, 12, tzinfo=UTC), datetime(2026, 12, 2, 1, tzinfo=UTC)
    writer = TldrWriter(store, config(llm, per_run=4, per_day=6), now=lambda: noon)
    assert writer.write(ids) == 4  # the run's budget
    assert writer.write(ids) == 2  # what is left of the day's
    assert writer.write(ids) == 0 and len(llm.calls) == 6
    assert TldrWriter(store, config(llm, per_day=7), now=lambda: noon).write(ids) == 1
    later = TldrWriter(store, config(llm, per_run=4, per_day=6), now=lambda: next_day)
    assert later.write(ids) == 4  # a new UTC day, a new budget


def test_a_dead_endpoint_costs_two_calls_not_one_per_paper(llm, sqlite_store):
    ids = stored(sqlite_store)
    llm.status = 500
    assert TldrWriter(sqlite_store, config(llm)).write(ids) == 0
    assert len(llm.calls) == 2


def test_the_key_never_reaches_the_log(llm, sqlite_store, caplog):
    """Even an endpoint that echoes the key in its error, a timeout, a refused connection."""
    ids = stored(sqlite_store)
    original = llm._reply

    def echoing(path, auth, body):
        status, payload = original(path, "Bearer wrong", body)  # refuse, naming what came
        payload["error"]["message"] = f"Incorrect API key provided: {auth}"
        return status, payload

    llm._reply = echoing
    caplog.set_level(logging.DEBUG)
    TldrWriter(sqlite_store, config(llm)).write(ids)
    llm._reply = original
    llm.delay = 1.0
    TldrWriter(sqlite_store, config(llm, timeout=0.2)).write(ids)
    TldrWriter(sqlite_store, LlmConfig(url="http://127.0.0.1:9", model="m", key=KEY)).write(ids)
    assert "not written" in caplog.text and "HTTP 401" in caplog.text
    assert KEY not in caplog.text
    assert KEY not in repr(config(llm))


def test_background_mode_never_makes_ingest_wait(llm, tmp_path):
    """The running bot's mode: ingest returns while the endpoint still holds its answer."""
    from bot.app import build
    from bot.config import Settings

    asked, release = threading.Event(), threading.Event()

    def held(body: dict) -> str:
        asked.set()
        release.wait(30)
        return "We held this answer back until the ingest had returned."

    llm.answer = held
    url = f"sqlite:///{tmp_path / 'bg.db'}"
    settings = Settings(
        database_url=url,
        index_dir=str(tmp_path / "index"),
        llm_url=llm.url,
        llm_model="tiny-tldr",
        llm_key=KEY,
        llm_per_run=2,
    )
    app = build(url, settings, console=None)  # the running bot: TL;DRs on a runtime thread
    try:
        report = app.papers.ingest(str(BUNDLED_PAPERS))
        assert report.added == 19  # returned while the first answer is still held
        assert not any(p.tldr for p in app.store.papers.list(50))
        assert asked.wait(30)  # the background thread did ask, and waits for the answer
        release.set()
        app.papers.tldrs.wait(30)
        lines = [p.tldr for p in app.store.papers.list(50) if p.tldr]
        assert lines == ["We held this answer back until the ingest had returned."] * 2
    finally:
        release.set()
        app.close()


def test_a_writer_crash_does_not_break_ingest(llm, tmp_path, caplog):
    """Whatever goes wrong while writing (a database error, a bug), the papers stay stored."""
    from bot.app import build
    from bot.config import Settings

    url = f"sqlite:///{tmp_path / 'crash.db'}"
    settings = Settings(
        database_url=url,
        index_dir=str(tmp_path / "index"),
        llm_url=llm.url,
        llm_model="tiny-tldr",
        llm_key=KEY,
    )
    app = build(url, settings)
    try:

        def crash(ids):
            raise RuntimeError("disk on fire")

        app.papers.tldrs.write = crash
        assert app.papers.ingest(str(BUNDLED_PAPERS)).added == 19
        assert app.store.papers.count() == 19 and "writing TL;DRs after ingesting" in caplog.text
    finally:
        app.close()


def test_the_first_runs_digest_does_not_wait_for_the_endpoint(llm, tmp_path):
    """`digestbot run` on an empty machine: the bundled papers' lines are written on a thread,
    so the first digest shows extractive lines while the endpoint still holds its answers."""
    release = threading.Event()

    def held(body: dict) -> str:
        release.wait(30)
        return "We held this answer back until the first digest was out."

    llm.answer = held
    try:
        done = digestbot(
            tmp_path,
            "run",
            input="/papers list\n",
            **env(llm, DIGESTBOT_LLM_TIMEOUT_SECONDS="120", DIGESTBOT_LLM_PER_RUN="1"),
        )
    finally:
        release.set()
    assert done.returncode == 0 and "=== #lab ===" in done.stdout, done.stderr
    assert "TL;DR: " in done.stdout and "We held this answer" not in done.stdout


# --- the done-when, through the command line ----------------------------------------------


def digest_json(tmp_path, **env: str) -> list[dict]:
    made = digestbot(tmp_path, "subscribe", "console:lab", "language models", **env)
    assert made.returncode == 0, made.stderr
    proc = digestbot(tmp_path, "digest", "console:lab", "--dry-run", "--json", **env)
    assert proc.returncode == 0, proc.stderr
    papers = json.loads(proc.stdout)["papers"]
    assert papers
    return papers


def test_digest_json_gives_an_extractive_tldr_by_default(tmp_path):
    ingested = digestbot(tmp_path, "ingest", str(BUNDLED_PAPERS))
    assert ingested.returncode == 0 and "TL;DR" not in ingested.stdout  # no endpoint: not said
    abstracts = {p.title: p.abstract for p in bundled()}
    for row in digest_json(tmp_path):
        assert row["tldr"] and row["tldr"] != row["title"]
        assert is_sentence_of(row["tldr"], abstracts[row["title"]]), row


def test_digest_json_gives_the_abstractive_line_with_the_endpoint(llm, tmp_path):
    settings = env(llm, DIGESTBOT_LLM_PER_RUN="19")
    ingested = digestbot(tmp_path, "ingest", str(BUNDLED_PAPERS), **settings)
    assert ingested.returncode == 0, ingested.stderr
    assert len(llm.calls) == 19
    # the summary line says how many lines were written (break: PaperService.ingest not
    # keeping after_ingest's count, or _report_line not showing it: red)
    assert "19 new" in ingested.stdout and ", 19 TL;DR lines written" in ingested.stdout
    for row in digest_json(tmp_path, **settings):
        assert row["tldr"].startswith("The authors study") and "TL;DR" not in row["tldr"]
    posted = digestbot(tmp_path, "digest", "console:lab", "--json", **settings)
    doc = json.loads(posted.stdout)
    assert doc["outcome"].startswith("posted") and doc["papers"], posted.stderr
    assert all(row["tldr"].startswith("The authors study") for row in doc["papers"])


def test_digest_json_falls_back_to_extractive_when_the_endpoint_times_out(llm, tmp_path):
    llm.delay = 2.0
    settings = env(llm, DIGESTBOT_LLM_TIMEOUT_SECONDS="0.3")
    ingested = digestbot(tmp_path, "ingest", str(BUNDLED_PAPERS), **settings)
    assert ingested.returncode == 0 and "19 new" in ingested.stdout, ingested.stderr
    assert len(llm.calls) == 2  # two timeouts in a row end the run
    assert ", 0 TL;DR lines written" in ingested.stdout, ingested.stdout
    abstracts = {p.title: (p.abstract, p.title_derived) for p in bundled()}
    for row in digest_json(tmp_path, **settings):
        abstract, derived = abstracts[row["title"]]
        assert row["tldr"] == extractive_tldr(abstract, row["title"], derived)


def test_a_failing_endpoint_does_not_break_ingest(llm, tmp_path):
    llm.status = 500
    ingested = digestbot(tmp_path, "ingest", str(BUNDLED_PAPERS), **env(llm))
    assert ingested.returncode == 0 and "19 new" in ingested.stdout, ingested.stderr
    assert "Traceback" not in ingested.stderr


def test_the_interactive_path_never_calls_the_endpoint(llm, tmp_path):
    settings = env(llm, DIGESTBOT_LLM_PER_RUN="3")
    assert digestbot(tmp_path, "ingest", str(BUNDLED_PAPERS), **settings).returncode == 0
    llm.arrived.clear()
    some = digest_json(tmp_path, **settings)[0]["id"]
    for args in (
        ("search", "language models", "--json"),
        ("papers", "show", some),
        ("cmd", "console:lab", f"/papers paper {some}"),
        ("cmd", "console:lab", "/papers search language models"),
        ("digest", "console:lab"),
    ):
        done = digestbot(tmp_path, *args, **settings)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        assert "TL;DR" in done.stdout or args[0] == "digest" or "--json" in args
    assert [a.path for a in llm.arrived] == []


def test_a_url_without_a_model_is_one_line(tmp_path):
    done = digestbot(tmp_path, "papers", "list", DIGESTBOT_LLM_URL="http://127.0.0.1:1/v1")
    assert done.returncode == 2 and "DIGESTBOT_LLM_MODEL" in done.stderr
    bad = digestbot(
        tmp_path, "papers", "list", DIGESTBOT_LLM_URL="ftp://x", DIGESTBOT_LLM_MODEL="m"
    )
    assert bad.returncode == 2 and "DIGESTBOT_LLM_URL" in bad.stderr


def test_fake_path_constant_is_the_configured_endpoint(llm):
    assert config(llm).endpoint.endswith(PATH)
