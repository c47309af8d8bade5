"""What the console and command line say (issue 23): no promise that is then broken.

Breaks that turn this red: digest_cmd without the paused check ("Posting today's digest…", then
"(paused …)"); outlook() keeping the pick's reason for a 👎 paper ("related to your interests");
run_cmd without the _no_input() check (`run` with stdin at /dev/null and no token exits 0, so
systemd's Restart=on-failure never restarts it); db_upgrade printing "up to date" whatever it did.
"""

from __future__ import annotations

from datetime import date

from bot.commands import Context
from digest.models import ChannelRef, SubscriptionKind
from tests.support.cli_proc import digestbot, digestbot_proc, one_error

LAB = ChannelRef("console", "lab")


def test_digest_now_while_paused_says_so_first(app) -> None:
    app.channels.follows.add(LAB, SubscriptionKind.TOPIC, "diffusion models")
    app.channels.settings.set_paused(LAB, True, "paused by ann")
    reply = app.commands.handle("digest now", Context(ref=LAB, user="ann"))
    assert reply.error and reply.deliver_now is None
    assert "paused by ann" in reply.text and "resume" in reply.text
    assert "Posting" not in reply.text


def test_why_on_a_downvoted_paper_names_the_vote(app) -> None:
    app.channels.follows.add(LAB, SubscriptionKind.TOPIC, "diffusion models")
    paper = app.digests.preview(LAB, date(2026, 12, 1)).items[0].paper
    app.channels.vote(LAB, "ann", paper.id, -1)
    reply = app.commands.handle(f"why {paper.id}", Context(ref=LAB, user="ann"))
    assert "👎" in reply.text and "related to your interests" not in reply.text


def test_run_with_nothing_to_serve_fails_with_one_line(tmp_path) -> None:
    proc = digestbot_proc(
        tmp_path, "run", timeout=120
    )  # a real process: stdin is /dev/null, as under systemd
    assert "no Slack or Discord token" in one_error(proc)


def test_db_upgrade_says_what_it_did(tmp_path) -> None:
    first = digestbot(tmp_path, "db", "upgrade")
    assert first.returncode == 0 and "database created" in first.stdout, first.stdout
    again = digestbot(tmp_path, "db", "upgrade")
    assert again.returncode == 0 and "up to date" in again.stdout
