"""A channel that follows nothing gets no digest: not from the scheduler, not from the CLI."""

import asyncio
import json
from datetime import UTC, datetime

from bot.runtime.runner import NOTHING_FOLLOWED, DigestRunner
from bot.runtime.scheduler import DigestScheduler
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from tests.fakes.recording import RecordingAdapter
from tests.support.cli_proc import digestbot, one_error

THURSDAY = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)  # an hour after a 09:00 UTC weekday digest


def _scheduler(app, reported=None):
    adapter = RecordingAdapter()
    on_outcome = None if reported is None else lambda platform, o: reported.append(str(o))
    runner = DigestRunner(Deliveries(app.papers, "w1"), {"console": adapter}, on_outcome)
    return DigestScheduler(runner, clock=lambda: THURSDAY), adapter


def test_scheduled_and_caught_up_digests_skip_a_channel_that_follows_nothing(app):
    """The rule lives in DigestRunner.skipped; the catch-up sweep asks it (no copy of its own).

    Breaks that turn this red: dropping the follows-nothing check in DigestRunner.skipped (an
    empty "Following: nothing yet" digest is posted); DigestScheduler._due not asking
    runner.skipped() (an outcome for it every sweep, in the log and the metrics: `reported`);
    checking only topics (the 👍-only channel below gets nothing, though votes alone rank
    papers)."""
    empty, voter = ChannelRef("console", "t1"), ChannelRef("console", "voter")
    app.channels.follows.add(empty, SubscriptionKind.TOPIC, "graph neural networks")
    app.channels.follows.unsubscribe(empty, "all")
    app.channels.follows.add(
        empty, SubscriptionKind.EXCLUDE, "quantum"
    )  # an exclusion is not an interest
    app.channels.vote(voter, "u1", "syn-rl-0", 1)  # a vote-only channel still has a profile
    for ref in (empty, voter):
        app.channels.settings.set_schedule(ref, "09:00", "UTC", "daily")
    reported: list[str] = []
    sched, adapter = _scheduler(app, reported)
    done = asyncio.run(sched.tick())
    assert "console:t1" not in done  # skipped quietly: no outcome logged or counted each sweep
    assert asyncio.run(sched.tick()) == {}  # the next sweep: nothing
    assert len(reported) == 1 and reported[0].startswith("posted")  # the voter's, once
    assert done["console:voter"].startswith("posted")
    t1 = app.store.channels.get(empty)
    assert asyncio.run(sched.fire(t1.id)) == NOTHING_FOLLOWED
    assert {ref.channel_id for ref, _ in adapter.digests} == {"voter"}
    assert app.store.deliveries.last(t1.id) is None  # nothing claimed: a later topic gets today's


def test_digest_cli_says_there_is_nothing_to_follow(tmp_path):
    """Breaks that turn this red: removing the follows-nothing check in `digestbot digest` (exit 0
    with an empty digest printed, or an empty preview with --dry-run); `channels` naming a next
    digest time for it."""
    corpus = tmp_path / "papers.jsonl"
    corpus.write_text(
        '{"id": "p1", "title": "Sparse autoencoders", "abstract": "Sparse features."}\n'
    )
    assert digestbot(tmp_path, "ingest", str(corpus)).returncode == 0
    assert digestbot(tmp_path, "subscribe", "console:t1", "sparse").returncode == 0
    assert digestbot(tmp_path, "cmd", "console:t1", "/papers unsubscribe all").returncode == 0
    for extra in ((), ("--dry-run",)):
        proc = digestbot(tmp_path, "digest", "console:t1", *extra)
        assert "console:t1 follows nothing" in one_error(proc)
        assert "Papers for" not in proc.stdout and "No new papers" not in proc.stdout
    assert "no digest: follows nothing" in digestbot(tmp_path, "channels").stdout  # not "next …"


def test_unsubscribe_all_keeps_exclusions_and_exclusions_clears_them(app):
    """Breaks that turn this red: `all` choosing every subscription (exclusions deleted, "Stopped
    following 6 items"); the `exclusions` selector missing (an error) or removing follows too."""
    ref = ChannelRef("console", "t4")
    for kind, text in [
        (SubscriptionKind.TOPIC, "graph neural networks"),
        (SubscriptionKind.AUTHOR, "Ada Lovelace"),
    ]:
        app.channels.follows.add(ref, kind, text)
    for term in ("quantum", "molecules", "proteins", "speech"):
        app.channels.follows.add(ref, SubscriptionKind.EXCLUDE, term)
    said = app.commands.handle("/papers unsubscribe all", _ctx(ref)).text
    assert said == (
        "Stopped following 2 items. 4 exclusions stay (`unsubscribe exclusions` removes them)."
    )
    left = app.channels.subscriptions(ref)
    assert [s.kind for s in left] == [SubscriptionKind.EXCLUDE] * 4
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    assert app.commands.handle("/papers unsubscribe exclusions", _ctx(ref)).text == (
        "Removed 4 exclusions."
    )
    assert [s.text for s in app.channels.subscriptions(ref)] == ["diffusion models"]
    app.channels.follows.add(ref, SubscriptionKind.EXCLUDE, "speech")
    assert app.commands.handle("/papers unsubscribe all", _ctx(ref)).text == (
        "Stopped following 'diffusion models'. 1 exclusion stays "
        "(`unsubscribe exclusions` removes it)."
    )


def _ctx(ref: ChannelRef):
    from bot.commands import Context

    return Context(ref, "u1")


def test_list_announces_no_digest_for_a_channel_that_follows_nothing(app):
    """Break that turns this red: `list` still naming a next digest time for a channel that
    follows nothing (the scheduler sends none)."""
    ref = ChannelRef("console", "t5")
    app.channels.follows.add(ref, SubscriptionKind.EXCLUDE, "quantum")
    listed = app.commands.handle("/papers list", _ctx(ref)).text
    assert "Next digest: none: follows nothing yet" in listed
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "graph neural networks")
    assert "Next digest: none" not in app.commands.handle("/papers list", _ctx(ref)).text


def test_chat_and_cli_agree_once_the_day_has_its_digest(env_isolated, capsys):
    """Today's digest went out, then the channel stopped following anything: chat's `digest now`
    and the CLI's `digest` both report the delivered day (its real state comes first); both
    say "follows nothing" about the digests to come (`list`, `channels`, `digest --dry-run`).

    Breaks that turn this red: handlers_channel.digest_cmd checking the bare profile again
    (chat: "follows nothing yet", exit 2, while the CLI says "already delivered");
    ChannelService.follows_nothing ignoring its day (both refuse a delivered day)."""
    from bot.cli.main import main
    from digest import BUNDLED_PAPERS

    assert main(["ingest", str(BUNDLED_PAPERS)]) == 0
    assert main(["subscribe", "console:t1", "sparse autoencoders"]) == 0
    assert main(["digest", "console:t1"]) == 0
    assert main(["cmd", "console:t1", "/papers unsubscribe all"]) == 0
    capsys.readouterr()
    assert main(["cmd", "console:t1", "/papers digest now"]) == 0
    chat = capsys.readouterr().out
    assert "already delivered" in chat and "follows nothing" not in chat, chat
    assert main(["digest", "console:t1"]) == 0
    cli = capsys.readouterr().out
    assert "already delivered" in cli and "follows nothing" not in cli, cli
    assert main(["cmd", "console:t1", "/papers list"]) == 0
    listed = capsys.readouterr().out
    assert "Next digest: none: follows nothing yet" in listed and "already delivered" in listed
    assert main(["digest", "console:t1", "--dry-run"]) == 2
    assert main(["cmd", "console:t1", "/papers digest preview"]) == 2
    assert main(["channels"]) == 0
    assert "no digest: follows nothing" in capsys.readouterr().out


def test_every_place_asks_the_one_rule(env_isolated, capsys, monkeypatch):
    """A channel with a topic, the rule forced to say "follows nothing": every caller obeys it.

    Breaks that turn this red: any of chat `list`, `digest now`, `digest preview`, `why`, the
    CLI's `digest` (with and without --dry-run) or `channels` keeping its own inline copy of
    the rule (profile().is_empty()) instead of ChannelService.follows_nothing."""
    from bot.cli.main import main
    from digest import BUNDLED_PAPERS
    from digest.channels.service import ChannelService

    assert main(["ingest", str(BUNDLED_PAPERS)]) == 0
    assert main(["subscribe", "console:t1", "sparse autoencoders"]) == 0
    capsys.readouterr()
    assert main(["search", "sparse autoencoders", "--json", "--limit", "1"]) == 0
    paper = json.loads(capsys.readouterr().out)["results"][0]["id"]
    monkeypatch.setattr(ChannelService, "follows_nothing", lambda self, ch, day=None: True)
    for text in ("/papers digest now", "/papers digest preview", f"/papers why {paper}"):
        assert main(["cmd", "console:t1", text]) == 2
        assert "follows nothing yet" in capsys.readouterr().out, text
    assert main(["cmd", "console:t1", "/papers list"]) == 0
    assert "Next digest: none: follows nothing yet" in capsys.readouterr().out
    for extra in ([], ["--dry-run"]):
        assert main(["digest", "console:t1", *extra]) == 2
        assert "follows nothing" in capsys.readouterr().err
    assert main(["channels"]) == 0
    assert "no digest: follows nothing" in capsys.readouterr().out
