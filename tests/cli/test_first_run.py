"""`digestbot run`'s first start: what it sets up, and start-up lines that say what is true."""

import io

from bot.app import build
from bot.cli.run import _first_run
from bot.config import Settings
from digest.models import ChannelRef

LAB = ChannelRef("console", "lab")


def _app(tmp_path, **settings):
    url = f"sqlite:///{tmp_path / 'run.db'}"
    return build(url, Settings(index_dir=str(tmp_path / "index"), database_url=url, **settings))


def test_with_platform_tokens_there_is_no_console_demo(tmp_path, capsys):
    """Breaks that turn this red: `_first_run` creating console:lab whatever the tokens (the
    reviewer's production run printed a console digest every weekday); bundled papers skipped
    with tokens set (a fresh deployment with no sources would rank nothing)."""
    app = _app(tmp_path)
    app.__dict__["slack"] = object()  # a configured platform (the cached property, filled)
    _first_run(app)
    out = capsys.readouterr().out
    assert "Loaded 19 bundled NeurIPS 2026 papers." in out and "channel" not in out
    assert app.store.channels.all() == []
    app.close()


def test_configured_sources_replace_the_bundled_papers(tmp_path, capsys):
    """Break that turns this red: loading the bundled list even when feeds are configured."""
    app = _app(tmp_path, arxiv_queries=["cat:cs.LG"])
    app.__dict__["discord"] = object()
    _first_run(app)
    assert app.store.papers.count() == 0 and capsys.readouterr().out == ""
    app.close()


def test_two_first_runs_at_once_each_say_what_the_database_held(tmp_path, capsys):
    """Two `run`s on an empty database, the second having looked before the first stored anything.

    Breaks that turn this red: printing `Loaded {added}` whatever was added ("Loaded 0 bundled"),
    or "Created channel" from a process whose topics were already there."""
    first = _app(tmp_path)
    _first_run(first)
    assert capsys.readouterr().out.splitlines() == [
        "Loaded 19 bundled NeurIPS 2026 papers.",
        "Created channel console:lab following: sparse autoencoders, LLM alignment, "
        "reinforcement learning.",
    ]
    second = _app(tmp_path)
    second.store.papers.count = lambda: 0  # what it read before the first process stored them
    second.store.channels.all = lambda: []
    _first_run(second)
    assert capsys.readouterr().out.splitlines() == [
        "19 bundled NeurIPS 2026 papers already stored (by another digestbot process).",
        "Channel console:lab set up by another digestbot process, following: sparse "
        "autoencoders, LLM alignment, reinforcement learning.",
    ]
    assert len(first.channels.subscriptions(LAB)) == 3
    first.close()
    second.close()


def test_a_service_with_tokens_posts_nothing_to_the_console(tmp_path, monkeypatch):
    """Breaks that turn this red: App.interactive keeping the console without a terminal when a
    platform is configured (an old console:lab's digest printed into the service log every
    weekday); App.adapters adding the console whatever ``interactive`` says."""
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # a service: nobody types at it
    url = f"sqlite:///{tmp_path / 'run.db'}"
    settings = Settings(index_dir=str(tmp_path / "index"), database_url=url, discord_token="t")
    service = build(url, settings, console=None)
    assert not service.interactive and set(service.adapters) == {"discord"}
    alone = build(url, Settings(index_dir=str(tmp_path / "index"), database_url=url), console=None)
    assert alone.interactive and "console" in alone.adapters  # nothing else to talk to
    assert "console" in build(url, settings).adapters  # one-shot commands keep it
    for app in (service, alone):
        app.close()
