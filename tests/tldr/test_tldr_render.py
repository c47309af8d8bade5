"""The TL;DR on every platform: Slack blocks, Discord embeds and the console show it once per card,
within each platform's limits (the validators the strict fakes use), and a planned digest keeps it.

Deliberate breaks that turn these red: a renderer dropping ``Card.tldr`` (its line is missing);
Slack's card body built without ``plain()`` on the TL;DR (a mention or formatting gets through);
the TL;DR added outside the Discord description's 1,200 cut or after `_fit` (over 6,000
characters); ``stored_reply`` not round-tripping the field (a retried digest loses its lines);
``paper_cmd`` clearing the TL;DR with the snippet; ``PaperRepo`` not attaching the cached line
(the scheduled Slack digest shows the extractive one instead).
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot.adapters.console import render as console_render
from bot.adapters.discord.embeds import render as discord_render
from bot.adapters.discord.embeds import render_one
from bot.adapters.discord.limits import message_problems as discord_problems
from bot.adapters.discord.poster import payload
from bot.adapters.render_text import paper_detail
from bot.adapters.slack.blocks import plain, render_items
from bot.adapters.slack.blocks import render as slack_render
from bot.adapters.slack.limits import message_problems as slack_problems
from bot.commands.replies import Reply, card
from bot.runtime.stored_reply import dumps, loads
from digest.tldr.extractive import MAX_TLDR_CHARS, tldr_line
from tests.tldr.test_tldr import bundled

HOSTILE = "<!channel> *bold* <@U123> " + "x" * MAX_TLDR_CHARS


def digest(n: int = 19, hostile: bool = False) -> Reply:
    papers = bundled()[:n]
    if hostile:
        papers = [replace(p, tldr=HOSTILE[:MAX_TLDR_CHARS]) for p in papers]
    cards = tuple(card(p, "matches 'x'", i, 0.5, feedback=True) for i, p in enumerate(papers, 1))
    return Reply(text="19 new papers for you.", title="📚 Papers", cards=cards, ephemeral=False)


def test_slack_shows_each_tldr_once_within_limits():
    reply = digest()
    messages = slack_render(reply)
    sections = [b["text"]["text"] for m in messages for b in m.blocks if b["type"] == "section"]
    for c in reply.cards:
        assert sum(plain(c.tldr)[:60] in s for s in sections) == 1
    for m in messages:
        assert slack_problems(m.blocks, m.text) == []
    parent, items = render_items(digest(hostile=True))
    for m in [parent, *items]:
        assert slack_problems(m.blocks, m.text) == []
        body = " ".join(b["text"]["text"] for b in m.blocks if b["type"] == "section")
        assert "<!channel>" not in body and "<@U123>" not in body


def test_discord_shows_each_tldr_within_limits():
    for hostile in (False, True):
        reply = digest(hostile=hostile)
        messages = discord_render(reply)
        for m in [*messages, render_one(replace(reply, cards=reply.cards[:9]))]:  # a search page
            assert discord_problems(payload(m)) == []
        shown = "\n".join(e.description or "" for m in messages for e in m.embeds)
        assert shown.count("TL;DR: ") == len(reply.cards)
        assert not re.search(r"(?<!\\)<@U123>", shown)  # escaped: no live mention


def test_console_and_cli_show_the_tldr():
    p = bundled()[10]
    text = console_render(digest(1))
    assert "TL;DR: " in text and " ".join(text.split()).count(tldr_line(bundled()[0])[:50]) == 1
    detail = paper_detail(p)
    assert "TL;DR: " in detail and detail.index("TL;DR") < detail.index(p.abstract[:30])


def test_a_planned_digest_keeps_its_tldrs():
    reply = digest(3)
    again = loads(dumps(reply))
    assert [c.tldr for c in again.cards] == [c.tldr for c in reply.cards] and reply.cards[0].tldr
    old = dumps(reply).replace('"tldr": ', '"_gone": ')  # a plan stored before TL;DRs existed
    import json

    data = json.loads(old)
    for c in data["cards"]:
        c.pop("_gone")
    assert loads(json.dumps(data)).cards[0].tldr == ""


def test_the_paper_command_shows_the_tldr(app):
    from bot.commands.core import Context
    from digest.models import ChannelRef

    some = app.store.papers.list(1)[0]
    ctx = Context(ref=ChannelRef("console", "lab"), user="ann")
    reply = app.commands.handle(f"paper {some.id}", ctx)
    assert reply.cards[0].tldr == tldr_line(some) and reply.cards[0].snippet == ""


def test_a_scheduled_slack_digest_arrives_with_cached_lines(app):
    """Through the runner and the strict fake Web API: the cached abstractive line when the
    paper has one for the configured model, the extractive one otherwise; every post valid."""
    import asyncio
    from datetime import date

    from bot.adapters.slack.poster import SlackPoster
    from bot.runtime.runner import DigestRunner
    from digest.delivery.steps import Deliveries
    from digest.models import ChannelRef, SubscriptionKind
    from tests.fakes.slack import FakeSlack

    ids = app.store.papers.recent_ids(1000)
    papers = app.store.papers.get_many(ids)
    for pid in ids[::2]:
        app.store.papers.tldrs.save(
            pid, "tiny", papers[pid].content_hash, f"Cached line for {pid}."
        )
    with FakeSlack() as slack:
        slack.join("C1")
        ref = ChannelRef("slack", "C1", "T1")
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")

        async def lookup(team):
            return "xoxb-test"

        poster = SlackPoster(lookup, base_url=slack.url, min_interval=0, backoff=0.01)
        runner = DigestRunner(Deliveries(app.papers, "w1"), {"slack": poster})
        ch = app.store.channels.get(ref)
        assert asyncio.run(runner.run_channel(ch.id, date(2026, 12, 1))).startswith("posted")
        (post,) = slack.posts("C1")
        assert slack_problems(post["blocks"], post["text"]) == []
        sections = [b for b in post["blocks"] if b["type"] == "section" and "block_id" in b]
        cards = [b for b in sections if b["block_id"].startswith("paper:")]
        assert cards and all("*TL;DR:* " in b["text"]["text"] for b in cards)
        for b in cards:
            pid = b["block_id"].removeprefix("paper:")
            want = f"Cached line for {pid}." if pid in ids[::2] else tldr_line(papers[pid])
            assert plain(want)[:50] in b["text"]["text"]
        assert not slack.rejected


def test_a_process_without_llm_settings_shows_the_stored_line(tmp_path, monkeypatch):
    """The line an ingest with DIGESTBOT_LLM_MODEL paid for is shown by `digestbot cmd` run with
    no LLM setting at all (and by one with another model); DIGESTBOT_TLDR=extractive prefers the
    extractive line.

    Breaks that turn this red: `PaperRepo._papers` reading lines only for a configured model
    (the plain process shows the extractive line); `TldrRepo.current` filtering by model when
    none is named; the composition root ignoring DIGESTBOT_TLDR."""
    from bot.cli.main import main as cli

    for name in [n for n in __import__("os").environ if n.startswith("DIGESTBOT_LLM")]:
        monkeypatch.delenv(name)
    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    monkeypatch.setenv("DIGESTBOT_DATABASE_URL", db)
    monkeypatch.setenv("DIGESTBOT_INDEX_DIR", str(tmp_path / "index"))
    from bot.app import build
    from bot.config import Settings

    writer = build(db, Settings(index_dir=str(tmp_path / "index"), database_url=db))
    writer.store.papers.upsert(bundled())
    some = writer.store.papers.list(1)[0]
    writer.store.papers.tldrs.save(some.id, "paid-model", some.content_hash, "Paid line here.")
    writer.close()

    def shown(capsys_out: str) -> str:
        return " ".join(capsys_out.split())

    import contextlib
    import io

    def run(*args: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            cli(["papers", "show", some.id, *args])
        return shown(out.getvalue())

    assert "TL;DR: Paid line here." in run()
    monkeypatch.setenv("DIGESTBOT_LLM_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("DIGESTBOT_LLM_MODEL", "another-model")
    assert "TL;DR: Paid line here." in run()
    monkeypatch.setenv("DIGESTBOT_TLDR", "extractive")
    text = run()
    assert (
        "Paid line here." not in text
        and f"TL;DR: {tldr_line(replace(some, tldr=None))[:40]}" in text
    )
