"""Every CLI error is one `error:` line and exit code 2, through `bot.cli.main.main` (in-process, tests/support/cli_proc.py).

Deliberate breaks seen red: the future-date check removed from `digest`; load_settings()
bypassed (plain Settings() in the callback). Expected red (not run): engine URLs unredacted. main()'s last-resort handler is not exercised by these (every case here has its
own message).
"""

import json

import pytest

from digest import BUNDLED_PAPERS
from tests.support.cli_proc import digestbot, one_error


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"DIGESTBOT_ARXIV_QUERIES": "cat:cs.LG"}, "DIGESTBOT_ARXIV_QUERIES: not a JSON list"),
        ({"DIGESTBOT_HEALTH_PORT": "abc"}, "DIGESTBOT_HEALTH_PORT"),
        ({"DIGESTBOT_HEALTH_PORT": "70000"}, "DIGESTBOT_HEALTH_PORT"),
        ({"DIGESTBOT_LOG_LEVEL": "loud"}, "one of DEBUG, INFO, WARNING"),
        ({"DIGESTBOT_LOG_FORMAT": "xml"}, "text or json"),
        ({"DIGESTBOT_DEFAULT_TIMEZONE": "Europe/Berln"}, "did you mean Europe/Berlin?"),
        ({"DIGESTBOT_DEFAULT_TIMEZONE": "CST"}, "America/Chicago or Asia/Shanghai"),
        ({"DIGESTBOT_DATABASE_URL": "postgresql://u:hunter2@localhost:54x2/db"}, "u:***@"),
        ({"DIGESTBOT_DATABASE_URL": "postgresq://u:hunter2@localhost/db"}, "Unsupported"),
    ],
)
def test_bad_settings_are_one_line_at_load(tmp_path, env, needle):
    line = one_error(digestbot(tmp_path, "channels", **env))
    assert needle in line and "hunter2" not in line


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("DELIVERY_BACKOFF_SECONDS", "abc"),
        ("DELIVERY_BACKOFF_SECONDS", "[60,"),
        ("DELIVERY_BACKOFF_SECONDS", "[60, -1]"),
        ("DELIVERY_BACKOFF_SECONDS", "[]"),
        ("DELIVERY_LEASE_SECONDS", "soon"),
        ("CATCHUP_GRACE_HOURS", "-1"),
        ("HEALTH_PORT", "abc"),
        ("SLACK_PORT", "-5"),
        ("OPENREVIEW_VENUES", "NeurIPS"),
        ("CATCHUP_GRACE_HOURS", "1e999"),
        ("CATCHUP_GRACE_HOURS", "169"),
        ("DELIVERY_LEASE_SECONDS", "1e999"),
        ("DELIVERY_LEASE_SECONDS", "1e300"),
        ("DELIVERY_SWEEP_SECONDS", "1e999"),
        ("DELIVERY_SWEEP_SECONDS", "nan"),
        ("DELIVERY_BACKOFF_SECONDS", "[1e999]"),
        ("DELIVERY_BACKOFF_SECONDS", "[60, Infinity]"),
        ("DELIVERY_BACKOFF_SECONDS", "[1e300]"),
        ("SEMANTIC", "maybe"),
    ],
)
def test_every_settings_error_names_the_variable_and_its_form(monkeypatch, var, value):
    """Breaks seen red: NoDecode dropped and the SettingsError branch back to pydantic's text ->
    'error parsing value for field ...' (the two JSON cases); `expected <form>` no longer added
    to pydantic's own messages -> the port, hours and seconds cases."""
    from bot.config import FORMS, load_settings
    from digest.errors import DigestError

    monkeypatch.setenv(f"DIGESTBOT_{var}", value)
    with pytest.raises(DigestError) as caught:
        load_settings(_env_file=None)
    line = str(caught.value)
    assert "\n" not in line and f"DIGESTBOT_{var}:" in line, line
    assert FORMS[var.lower()] in line and "got '" in line, line


def test_out_of_range_durations_stop_before_any_command_runs(tmp_path):
    """An infinite grace once passed `channels` and crashed `run` with OverflowError.
    Break seen red: allow_inf_nan/le dropped from catchup_grace_hours -> rc 0."""
    bad = digestbot(tmp_path, "channels", DIGESTBOT_CATCHUP_GRACE_HOURS="1e999")
    line = one_error(bad)
    assert "DIGESTBOT_CATCHUP_GRACE_HOURS" in line and "got '1e999'; expected" in line, line


def test_verbose_logs_the_details_of_a_refused_setting(tmp_path):
    """README: `-v` adds details to the log. Break seen red: the callback configuring logging only
    after load_settings() -> no INFO line at all."""
    bad = digestbot(tmp_path, "-v", "channels", DIGESTBOT_SEMANTIC="maybe")
    assert bad.returncode == 2 and "settings refused" in bad.stderr, bad.stderr
    assert bad.stderr.strip().splitlines()[-1].startswith("error: bad setting: DIGESTBOT_SEMANTIC")


def test_verbose_is_not_flooded_by_alembic(tmp_path):
    """`-v` on a fresh database (migrations run) shows our details, not alembic's plugin chatter.
    Break seen red: the alembic logger left at the root level (INFO with -v)."""
    proc = digestbot(tmp_path, "-v", "papers", "show", "no-such-id")
    assert proc.returncode == 2 and "error details" in proc.stderr, proc.stderr
    assert "alembic" not in proc.stderr, proc.stderr


def test_settings_blank_means_unset_and_zones_are_forgiving(tmp_path):
    ok = digestbot(
        tmp_path,
        "cmd",
        "console:lab",
        "/papers schedule 08:00",
        DIGESTBOT_DISCORD_TOKEN="",
        DIGESTBOT_SLACK_BOT_TOKEN="",
        DIGESTBOT_HEALTH_PORT="",
        DIGESTBOT_DEFAULT_TIMEZONE="pst",
    )
    assert ok.returncode == 0, ok.stderr
    assert "America/Los_Angeles" in ok.stdout


def test_reading_an_unknown_channel_creates_nothing(tmp_path):
    """Read-only commands on a channel nobody set up: one error line, and no channel appears.

    Break seen red: ChannelService.create_missing ignored (channel() always creates) -> `cmd
    list` answers and `channels` lists slack:T/C."""
    for args in (
        ("cmd", "slack:T/C", "/papers list"),
        ("cmd", "slack:T/C", "/papers me stats"),
        ("cmd", "slack:T/C", "/papers unsubscribe all"),
        ("feedback", "slack:T/C", "anything", "up"),
        ("digest", "slack:T/C", "--dry-run"),
    ):
        line = one_error(digestbot(tmp_path, *args))
        if "me" in args[-1].split():  # a personal digest: the words chat and README use
            assert "You have no personal digest yet" in line and "me subscribe" in line, line
        else:
            assert "No channel slack:T/C" in line and "subscribe first" in line, line
    assert digestbot(tmp_path, "cmd", "slack:T/C", "/papers help").returncode == 0
    assert digestbot(tmp_path, "channels").stdout.startswith("No channels yet")
    made = digestbot(tmp_path, "cmd", "slack:T/C", "/papers subscribe graph neural networks")
    assert made.returncode == 0 and "Now following" in made.stdout
    assert digestbot(tmp_path, "cmd", "slack:T/C", "/papers list").returncode == 0


def test_a_missing_database_folder_is_an_error_but_the_default_one_is_made(tmp_path):
    """Break seen red: make_engine always creating the folder -> rc 0 and tmp/missing exists."""
    url = f"sqlite:///{tmp_path / 'missing' / 'dir' / 'x.db'}"
    line = one_error(digestbot(tmp_path, "--db", url, "channels"))
    assert "does not exist" in line and str(tmp_path / "missing" / "dir") in line
    assert not (tmp_path / "missing").exists()
    xdg = tmp_path / "xdg"  # the per-user default is ours to create
    proc = digestbot(tmp_path, "channels", DIGESTBOT_DATABASE_URL="", XDG_DATA_HOME=str(xdg))
    assert proc.returncode == 0, proc.stderr
    assert (xdg / "digestbot" / "digestbot.db").exists()


def test_export_to_a_missing_folder(tmp_path):
    line = one_error(digestbot(tmp_path, "export", str(tmp_path / "nope" / "state.json")))
    assert "does not exist" in line


def test_export_never_overwrites_the_database_or_a_file_unasked(tmp_path):
    """Break: drop _refuse_overwrite -> the database is replaced by JSON and `channels` fails."""
    assert digestbot(tmp_path, "subscribe", "console:lab", "graph neural networks").returncode == 0
    assert "the database itself" in one_error(
        digestbot(tmp_path, "export", str(tmp_path / "cli.db"))
    )
    (tmp_path / "old.json").write_text("keep me")
    assert "--force" in one_error(digestbot(tmp_path, "export", str(tmp_path / "old.json")))
    assert (tmp_path / "old.json").read_text() == "keep me"
    assert digestbot(tmp_path, "export", "--force", str(tmp_path / "old.json")).returncode == 0
    assert "console:lab" in digestbot(tmp_path, "channels").stdout  # the database is intact


def test_digest_refuses_platforms_without_a_connection_and_future_dates(tmp_path):
    """An unknown channel is said first. Break seen red: the connection check before find()
    -> 'No slack connection' for a channel nobody subscribed."""
    line = one_error(digestbot(tmp_path, "digest", "slack:T1/C001"))
    assert "No channel slack:T1/C001; subscribe first" in line, line
    assert (
        digestbot(tmp_path, "subscribe", "slack:T1/C001", "graph neural networks").returncode == 0
    )
    assert "No slack connection" in one_error(digestbot(tmp_path, "digest", "slack:T1/C001"))
    assert digestbot(tmp_path, "subscribe", "console:lab", "graph neural networks").returncode == 0
    line = one_error(digestbot(tmp_path, "digest", "console:lab", "--date", "2099-01-01"))
    assert "in the future" in line and "--dry-run" in line
    preview = digestbot(tmp_path, "digest", "console:lab", "--date", "2099-01-01", "--dry-run")
    assert preview.returncode == 0
    # the day was not used up
    assert "no digest delivered yet" in digestbot(tmp_path, "channels").stdout


@pytest.mark.parametrize(
    ("day", "needle"), [("1900-01-01", "before console:lab was set up"), ("2025-11-30", "before")]
)
def test_digest_refuses_days_before_the_channel_existed(tmp_path, day, needle):
    """Repro: `digest --date 1900-01-01` posted a digest and used up backlog papers.
    Break seen red: `refuse_day` call removed from `digest_cmd`."""
    assert digestbot(tmp_path, "subscribe", "console:lab", "graph neural networks").returncode == 0
    line = one_error(digestbot(tmp_path, "digest", "console:lab", "--date", day))
    assert needle in line and "--dry-run" in line, line
    assert digestbot(tmp_path, "digest", "console:lab", "--date", day, "--dry-run").returncode == 0
    assert "no digest delivered yet" in digestbot(tmp_path, "channels").stdout


def test_digest_json_prints_only_json_on_stdout(tmp_path):
    assert digestbot(tmp_path, "ingest", str(BUNDLED_PAPERS)).returncode == 0
    digestbot(tmp_path, "subscribe", "console:lab", "sparse autoencoders")
    proc = digestbot(tmp_path, "digest", "console:lab", "--json")
    doc = json.loads(proc.stdout)  # the whole of stdout is one JSON document
    assert proc.returncode == 0 and doc["outcome"].startswith("posted") and doc["papers"]


def test_workspace_channels_are_addressable(tmp_path):
    proc = digestbot(tmp_path, "subscribe", "slack:T123/C456", "graph neural networks")
    assert proc.returncode == 0, proc.stderr
    listing = digestbot(tmp_path, "channels").stdout
    assert listing.startswith("slack:T123/C456 ")
    again = digestbot(tmp_path, "cmd", "slack:T123/C456", "/papers list")
    assert "graph neural networks" in again.stdout
    assert "WORKSPACE/CHANNEL" in one_error(digestbot(tmp_path, "subscribe", "slack:/C1", "x"))


def _export(tmp_path, mutate):
    assert digestbot(tmp_path, "subscribe", "console:lab", "graph neural networks").returncode == 0
    path = tmp_path / "state.json"
    assert digestbot(tmp_path, "export", str(path)).returncode == 0
    doc = json.loads(path.read_text())
    mutate(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    return bad


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d["channels"][0].pop("platform"), "missing 'platform'"),
        (lambda d: d["channels"][0].update(created_at="yesterday"), "not a date/time"),
        (lambda d: d["subscriptions"].append(dict(d["subscriptions"][0])), "appears twice"),
        (lambda d: d["channels"][0].update(id="one"), "expected a whole number"),
        (lambda d: d["subscriptions"][0].update(channel_id=99), "dangling"),
        (lambda d: d["channels"][0].update(timezone="Mars/Base"), "'timezone': Unknown time zone"),
        (lambda d: d["channels"][0].update(weekdays="funday"), "'weekdays': Days must be"),
    ],
)
def test_import_rejects_broken_exports_and_keeps_nothing(tmp_path, mutate, needle):
    bad = _export(tmp_path, mutate)
    target = f"sqlite:///{tmp_path / 'new.db'}"
    assert needle in one_error(digestbot(tmp_path, "--db", target, "import", str(bad)))
    assert digestbot(tmp_path, "--db", target, "channels").stdout.startswith("No channels yet")


def test_empty_database_says_so(tmp_path):
    assert digestbot(tmp_path, "channels").stdout.startswith("No channels yet")
    assert digestbot(tmp_path, "papers", "list").stdout.startswith("No papers stored yet")


def test_help_loads_no_heavy_library():
    """`digestbot --help` answers fast because the command modules import nothing heavy at load.

    Break that turns it red: a top-level `from bot import app` (or any digest.rank import) in
    bot/cli*.py."""
    import subprocess
    import sys

    code = (
        "import sys; import bot.cli.main, bot.cli.channels, bot.cli.ops, bot.cli.papers, bot.cli.run; "
        "heavy = ('sklearn', 'sqlalchemy', 'pydantic', 'apscheduler', 'aiohttp', 'numpy'); "
        "print([m for m in sys.modules if m.split('.')[0] in heavy])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
    help_text = digestbot_help()
    assert "ingest" in help_text and "digest" in help_text


def digestbot_help() -> str:
    import subprocess

    from tests.support.cli_proc import ENTRY

    return subprocess.run([str(ENTRY), "--help"], capture_output=True, text=True).stdout


def test_bad_pages_platforms_and_backoffs_are_refused(tmp_path):
    """Breaks: drop the --page check (negative ranks printed), the platform list (a channel that
    can never be served), or the backoff bound (a negative wait): each case below goes red."""
    assert "--page" in one_error(digestbot(tmp_path, "search", "sparse", "--page", "0"))
    assert "Unknown platform 'irc'" in one_error(digestbot(tmp_path, "subscribe", "irc:foo", "x"))
    assert "irc" not in digestbot(tmp_path, "channels").stdout  # nothing was created
    bad = digestbot(tmp_path, "channels", DIGESTBOT_DELIVERY_BACKOFF_SECONDS="[-5]")
    assert "DIGESTBOT_DELIVERY_BACKOFF_SECONDS" in one_error(bad)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("/papers size 0", "⚠ Digest size must be"),
        ("/papers frobnicate", "⚠ Unknown command 'frobnicate'"),
        ("/papers schedule 08:00 Mars/Base", "⚠ "),
        ("/papers threshold 1.5", "⚠ "),
    ],
)
def test_cmd_exits_2_when_the_chat_reply_is_an_error(tmp_path, text, shown):
    """README: every error exits 2. Break seen red: cmd ignoring reply.error -> rc 0."""
    done = digestbot(tmp_path, "cmd", "console:lab", text)
    assert done.returncode == 2 and done.stdout.startswith(shown), (done.returncode, done.stdout)
    assert digestbot(tmp_path, "cmd", "console:lab", "/papers size 5").returncode == 0


def test_an_unsupported_database_says_which_are_supported(tmp_path):
    """A mysql URL once suggested installing the postgres extra. Break seen red: the backend
    check removed from make_engine -> 'Database driver missing … [postgres]'."""
    line = one_error(digestbot(tmp_path, "--db", "mysql://x@localhost/db", "channels"))
    assert "only SQLite" in line and "PostgreSQL" in line and "[postgres]" not in line, line


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("subscribe", "slack:T1", "topic"), "slack:WORKSPACE/CHANNEL"),
        (("subscribe", "discord:G/C/X", "topic"), "discord:WORKSPACE/CHANNEL"),
        (("digest", "discord:G1"), "discord:WORKSPACE/CHANNEL"),
        (("ingest", "arxiv:"), "arxiv: needs a QUERY"),
        (("ingest", "openreview: "), "openreview: needs a VENUE_ID"),
    ],
)
def test_channel_refs_and_source_queries_are_checked_locally(tmp_path, args, needle):
    """Breaks seen red: ChannelRef.parse accepting a Slack/Discord ref without its workspace
    part (stored as 'slack:T1'); an empty `arxiv:` query sent to the network."""
    env = {"DIGESTBOT_ARXIV_BASE_URL": "http://127.0.0.1:9/never"}  # no request may be made
    line = one_error(digestbot(tmp_path, *args, **env))
    assert needle in line and "Cannot reach" not in line, line
    assert digestbot(tmp_path, "channels").stdout.startswith("No channels yet")


def test_a_commands_internal_fault_is_one_line_on_the_command_line(tmp_path, monkeypatch):
    """A bug inside a command is answered "Something went wrong" and logged as one line on
    stderr, not a traceback; -v shows the traceback.

    Break tried: the text formatter keeping tracebacks for one-shot commands (red)."""
    from bot.commands.core import Commands

    def broken(self, text, ctx):  # noqa: ANN001, ARG001
        raise ValueError("Unknown symbol: \\nocmd")

    monkeypatch.setattr(Commands, "_dispatch", broken)
    got = digestbot(tmp_path, "cmd", "console:lab", "/papers list")
    assert "Something went wrong on our side" in got.stdout + got.stderr
    assert "Traceback" not in got.stderr and "ValueError: Unknown symbol" in got.stderr
    verbose = digestbot(tmp_path, "-v", "cmd", "console:lab", "/papers list")
    assert "Traceback" in verbose.stderr


@pytest.mark.parametrize("args", [(), ("-v",), ("--db", "sqlite:///x.db")])
def test_no_command_names_the_commands_whatever_options_came_first(tmp_path, args):
    """`digestbot`, `digestbot -v` and `digestbot --db URL` alone say which commands exist.
    Break: the plain "Missing command." after options (red)."""
    line = one_error(digestbot(tmp_path, *args))
    assert "needs one of: channels, cmd" in line
