"""Digest outcomes are typed (bot/runtime/outcome.py): the CLI's exit codes follow the kind, not the
wording, and the text people read is unchanged (an Outcome is the str it shows).

Breaks that turn this red: state_kind() calling a FAILED delivery BUSY (exit 3 for our own
failure) or a retrying one SETTLED (exit 0); POSTED/EMPTY read as BUSY; an expired lease's
state not BUSY.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime

import pytest

from bot.runtime.outcome import Kind, Outcome, state_kind
from digest.delivery.steps import describe
from digest.store.deliveries import CLAIMED, EMPTY, FAILED, POSTED, SENDING, Delivery, ItemClaim

NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)


def delivery(status: str, retry: bool = False, error: str | None = None) -> Delivery:
    return Delivery(
        1,
        1,
        date(2026, 12, 1),
        status,
        "w1",
        NOW,
        None,
        0,
        retry_at=NOW if retry else None,
        last_error=error,
    )


@pytest.mark.parametrize(
    ("d", "text", "kind"),
    [
        (None, "not delivered yet", Kind.NOT_SENT),
        (delivery(POSTED), "already delivered", Kind.SETTLED),
        (delivery(EMPTY), "nothing new (quiet day)", Kind.SETTLED),
        (delivery(FAILED, error="x"), "not delivered: x", Kind.FAILED),  # nothing arrived
        (
            replace(delivery(FAILED, error="x"), items=(ItemClaim("p", 1, 1.0, ""),)),
            "partly delivered, then stopped",
            Kind.FAILED,
        ),
        (delivery(CLAIMED, True, "Slack error 500"), "retrying at 09:00 UTC", Kind.RETRYING),
        (delivery(CLAIMED), "being prepared", Kind.BUSY),
        (delivery(SENDING), "being sent", Kind.BUSY),
        (delivery(CLAIMED, retry=True), "being prepared", Kind.BUSY),  # a retry without a reason
    ],
)
def test_each_stored_state_has_the_kind_its_words_say(d, text, kind):
    assert describe(d).startswith(text) and state_kind(d) is kind


EXIT_CODES = [
    (Kind.POSTED, 0),
    (Kind.SETTLED, 0),
    (Kind.NOT_SENT, 2),
    (Kind.BUSY, 3),
    (Kind.LOST, 3),
    (Kind.RETRYING, 1),
    (Kind.FAILED, 1),
]


@pytest.mark.parametrize(("kind", "exit_code"), EXIT_CODES)
def test_exit_codes_follow_the_kind_and_the_text_is_unchanged(kind, exit_code):
    """The CLI's own mapping (bot.cli.channels.digest_exit_code), every kind, as README says.

    Breaks that turn this red: any entry of digest_exit_code's table changed (NOT_SENT back to
    0, LOST to 0, RETRYING to 3...); a Kind added without an exit code (KeyError)."""
    from bot.cli.channels import digest_exit_code

    outcome = Outcome("some words", kind)
    assert digest_exit_code(outcome) == exit_code
    assert outcome == "some words" and f"({outcome})" == "(some words)" and outcome.kind is kind
    assert {k for k, _ in EXIT_CODES} == set(Kind)  # every kind is covered here


@pytest.mark.parametrize(
    ("kind", "exit_code"),
    [(Kind.POSTED, 0), (Kind.NOT_SENT, 2), (Kind.BUSY, 3), (Kind.FAILED, 1)],
)
def test_digest_command_exits_with_the_code_of_its_outcome(
    env_isolated, capsys, monkeypatch, kind, exit_code
):
    """The real `main(["digest", ...])` with a runner answering each kind: the process exit code.

    Breaks that turn this red: digest_cmd not using digest_exit_code's answer (e.g. the old
    `3 if unsettled_by_another else 1 if post_failed else 0`: NOT_SENT exits 0), or raising
    typer.Exit(0) regardless; the mapping table changed."""
    from bot.cli.main import main
    from bot.runtime.runner import DigestRunner
    from digest import BUNDLED_PAPERS

    assert main(["ingest", str(BUNDLED_PAPERS)]) == 0
    assert main(["subscribe", "console:lab", "sparse autoencoders"]) == 0

    async def answer(self, channel_id, day):
        return Outcome("paused by the command line" if kind is Kind.NOT_SENT else "words", kind)

    monkeypatch.setattr(DigestRunner, "run_channel", answer)
    for extra in ([], ["--json"]):
        capsys.readouterr()
        assert main(["digest", "console:lab", *extra]) == exit_code
        assert "Traceback" not in capsys.readouterr().err


def test_digest_on_a_paused_channel_is_not_settled(env_isolated, capsys):
    """A paused channel's `digestbot digest` says why in one `error:` line and exits 2, with or
    without --json (README: 0 means settled; nothing was sent here).

    Breaks that turn this red: NOT_SENT mapped to 0 in bot.cli.channels.digest_exit_code (rc 0
    and "paused by the command line" on stdout); the not-sent branch printing the JSON instead of
    the error line; the resume hint dropped."""
    from bot.cli.main import main
    from digest import BUNDLED_PAPERS

    assert main(["ingest", str(BUNDLED_PAPERS)]) == 0
    assert main(["subscribe", "console:t1", "sparse autoencoders"]) == 0
    assert main(["cmd", "console:t1", "/papers pause"]) == 0
    for extra in ([], ["--json"]):
        capsys.readouterr()
        assert main(["digest", "console:t1", *extra]) == 2
        seen = capsys.readouterr()
        line = seen.err.strip()
        assert seen.out == "" and line.count("\n") == 0 and line.startswith("error: "), seen
        assert "not sent: paused by the command line" in line
        assert '"/papers resume"' in line
    assert main(["cmd", "console:t1", "/papers resume"]) == 0
    assert main(["digest", "console:t1"]) == 0  # resumed: posted now
