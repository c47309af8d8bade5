"""Items 4 and 9 on a real `digestbot run`: nothing a user typed reaches the logs at DEBUG, and a
bot token without a signing secret or app token refuses to start.

Item 4 breaks tried: no ChatPayloadFilter on the handler (Bolt's 'Invalid request signature ...
body: ...' line and slack_sdk's DEBUG payload lines carry the typed text: red).
Item 9 break tried: SlackConfig.check() not called (the bot starts and answers 500s: red).
"""

import json
import os
import signal
import subprocess
import sys
import time
from urllib.parse import urlencode

import httpx
from slack_sdk.signature import SignatureVerifier

from tests.adapters.slack.test_slack_run import free_port
from tests.fakes.slack import FakeSlack

TYPED = "zebraquokka"  # what users type, in every request below


def env_for(tmp_path, slack: FakeSlack, port: int, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIGESTBOT_")}
    return env | {
        "DIGESTBOT_DATABASE_URL": f"sqlite:///{tmp_path / 'bot.db'}",
        "DIGESTBOT_INDEX_DIR": str(tmp_path / "index"),
        "DIGESTBOT_SLACK_BOT_TOKEN": "xoxb-run",
        "DIGESTBOT_SLACK_API_URL": slack.url,
        "DIGESTBOT_SLACK_HOST": "127.0.0.1",
        "DIGESTBOT_SLACK_PORT": str(port),
        "DIGESTBOT_HEALTH_PORT": "0",
        **extra,
    }


def send(port: int, body: str, ctype: str, secret: str = "run-secret", ts: str | None = None):
    ts = ts or str(int(time.time()))
    sig = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    headers = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sig, "Content-Type": ctype}
    return httpx.post(f"http://127.0.0.1:{port}/slack/events", content=body, headers=headers)


def requests(slack: FakeSlack) -> list[tuple[str, str, dict]]:
    form = "application/x-www-form-urlencoded"
    command = urlencode(
        {
            "command": "/papers",
            "text": f"search {TYPED} diffusion",
            "team_id": "T1",
            "channel_id": "C5",
            "user_id": "U1",
            "trigger_id": "t1",
            "response_url": f"{slack.url}resp-run",
        }
    )
    payload = {
        "type": "block_actions",
        "team": {"id": "T1"},
        "user": {"id": "U1"},
        "channel": {"id": "C5"},
        "trigger_id": "t2",
        "response_url": f"{slack.url}resp-b",
        "actions": [{"action_id": "page_0", "value": f"search {TYPED} page:2", "action_ts": "1.2"}],
    }
    dm = json.dumps(
        {
            "type": "event_callback",
            "team_id": "T1",
            "event_id": "Ev1",
            "event": {
                "type": "message",
                "channel_type": "im",
                "channel": "DU1",
                "user": "U1",
                "text": f"subscribe {TYPED}",
                "ts": "1.1",
            },
        }
    )
    stale = str(int(time.time()) - 900)
    return [
        (command, form, {}),
        (urlencode({"payload": json.dumps(payload)}), form, {}),
        (dm, "application/json", {}),
        (command, form, {"secret": "wrong"}),  # bad signature: Bolt logs the whole body
        (command, form, {"ts": stale}),
        (command + "&pad=" + "x" * 200_000, form, {"secret": "wrong"}),
        (command, "application/json", {}),  # malformed
    ]


def test_a_full_run_at_debug_never_logs_what_users_typed(tmp_path):
    port = free_port()
    # stderr to a file: a full pipe would block the bot
    with FakeSlack() as slack, open(tmp_path / "stderr.log", "w") as log:
        env = env_for(
            tmp_path,
            slack,
            port,
            DIGESTBOT_SLACK_SIGNING_SECRET="run-secret",
            DIGESTBOT_LOG_LEVEL="DEBUG",
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "run"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        try:
            for _ in range(150):
                try:
                    httpx.get(f"http://127.0.0.1:{port}/slack/events")
                    break
                except httpx.ConnectError:
                    time.sleep(0.2)
            statuses = [
                send(port, body, ctype, **kw).status_code for body, ctype, kw in requests(slack)
            ]
            for _ in range(100):
                if len(slack.responses()) >= 2 and any(
                    m == "chat.postMessage" for m, _ in slack.calls
                ):
                    break
                time.sleep(0.1)
        finally:
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=30)
    err = (tmp_path / "stderr.log").read_text()
    assert statuses == [200, 200, 200, 401, 401, 401, 400], statuses
    assert len(slack.responses()) >= 2  # the typed requests were really handled
    assert TYPED not in err and TYPED not in out
    assert "rejected a Slack request: invalid signature" in err
    assert "Sending a request" not in err and "DEBUG" in err  # DEBUG on, payload lines gone
    assert max(len(line) for line in err.splitlines()) < 2000


def test_a_bot_token_alone_refuses_to_start(tmp_path):
    with FakeSlack() as slack:
        env = env_for(tmp_path, slack, free_port())
        proc = subprocess.run(
            [sys.executable, "-m", "bot", "run"],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "DIGESTBOT_SLACK_SIGNING_SECRET" in lines[0] and "DIGESTBOT_SLACK_APP_TOKEN" in lines[0]


def test_library_warnings_keep_their_words_but_not_the_body():
    import logging

    from slack_sdk.errors import SlackApiError

    from bot.logs import ChatPayloadFilter

    def record(name, level, msg, exc=None):
        return logging.LogRecord(name, level, __file__, 1, msg, (), exc)

    f = ChatPayloadFilter()
    warn = record(
        "slack_bolt.AsyncApp", logging.WARNING, f"Unhandled request ({{'text': '{TYPED}'}})"
    )
    assert f.filter(warn) and warn.getMessage() == "Unhandled request (…)"
    try:
        raise SlackApiError(f"failed: {{'message': {{'text': '{TYPED}'}}}}", {"ok": False})
    except SlackApiError as exc:
        err = record(
            "slack_bolt.App",
            logging.ERROR,
            f"Failed to run listener ({exc})",
            (type(exc), exc, None),
        )
    assert f.filter(err) and TYPED not in err.getMessage() and err.exc_info is None
    assert "SlackApiError" in err.getMessage()
    assert not f.filter(record("slack_sdk.web", logging.DEBUG, f"Sending a request - {TYPED}"))
    ours = record("bot.runtime.runner", logging.INFO, "digest posted 5 papers")
    assert f.filter(ours) and ours.getMessage() == "digest posted 5 papers"


def test_half_configured_slack_is_refused_with_what_is_missing():
    import pytest

    from bot.adapters.slack.app import SlackConfig
    from digest.errors import DigestError

    SlackConfig().check()  # no Slack at all: fine
    SlackConfig(bot_token="xoxb-1", app_token="xapp-1").check()
    SlackConfig(bot_token="xoxb-1", signing_secret="s").check()
    for cfg, missing in (
        (SlackConfig(bot_token="xoxb-1"), "DIGESTBOT_SLACK_SIGNING_SECRET"),
        (SlackConfig(app_token="xapp-1"), "DIGESTBOT_SLACK_BOT_TOKEN"),
        (SlackConfig(signing_secret="s"), "DIGESTBOT_SLACK_BOT_TOKEN"),
        (SlackConfig(client_id="1.2", client_secret="x", app_token="xapp"), "SIGNING_SECRET"),
    ):
        with pytest.raises(DigestError, match=missing):
            cfg.check()
