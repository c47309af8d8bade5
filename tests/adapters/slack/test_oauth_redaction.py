"""An OAuth redirect's `code` and `state` never reach the log (issue 23), nor a group DM scope gap.

Breaks that turn this red: redact() without the OAUTH pattern (the access log line of
/slack/oauth_redirect?code=…&state=… is written as is, and so is Bolt's warning that prints the
parsed query); mpim:read dropped from BOT_SCOPES / the manifest (conversations.members of a
group DM is refused, so nobody may manage its digest from the Home).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.adapters.slack.app import BOT_SCOPES
from bot.logs import redact


def test_oauth_code_and_state_are_redacted_in_both_shapes() -> None:
    access = '127.0.0.1 "GET /slack/oauth_redirect?code=123.456.abcdef&state=s3cr3t HTTP/1.1" 302'
    bolt = "Unhandled request ({'code': ['123.456.abcdef'], \"state\": \"s3cr3t\"})"
    for line in (access, bolt):
        out = redact(line)
        assert "abcdef" not in out and "s3cr3t" not in out and "[redacted]" in out
    assert (
        redact("the error code=429 was") == "the error code=[redacted] was"
    )  # errs on the safe side


def test_group_dm_membership_scope_is_asked_for() -> None:
    manifest = yaml.safe_load((Path(__file__).parents[3] / "deploy/slack/manifest.yml").read_text())
    assert "mpim:read" in manifest["oauth_config"]["scopes"]["bot"] and "mpim:read" in BOT_SCOPES
