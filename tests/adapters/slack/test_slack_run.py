"""`digestbot run` with Slack tokens set: the bot serves signed Slack requests until SIGTERM."""

import os
import signal
import socket
import subprocess
import sys
import time
from urllib.parse import urlencode

import httpx
from slack_sdk.signature import SignatureVerifier

from tests.fakes.slack import FakeSlack


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_run_starts_slack_from_the_environment_and_stops_on_sigterm(tmp_path):
    port = free_port()
    with FakeSlack() as slack:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DIGESTBOT_")}
        env |= {
            "DIGESTBOT_DATABASE_URL": f"sqlite:///{tmp_path / 'bot.db'}",
            "DIGESTBOT_INDEX_DIR": str(tmp_path / "index"),
            "DIGESTBOT_SLACK_BOT_TOKEN": "xoxb-run",
            "DIGESTBOT_SLACK_SIGNING_SECRET": "run-secret",
            "DIGESTBOT_SLACK_API_URL": slack.url,
            "DIGESTBOT_SLACK_HOST": "127.0.0.1",
            "DIGESTBOT_SLACK_PORT": str(port),
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "run"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            body = urlencode(
                {
                    "command": "/papers",
                    "text": "search sparse autoencoders",
                    "team_id": "T1",
                    "channel_id": "C5",
                    "user_id": "U1",
                    "response_url": f"{slack.url}resp-run",
                }
            )
            status = None
            for _ in range(100):  # wait for the server to come up
                ts = str(int(time.time()))
                sig = SignatureVerifier("run-secret").generate_signature(timestamp=ts, body=body)
                headers = {
                    "X-Slack-Request-Timestamp": ts,
                    "X-Slack-Signature": sig,
                    "Content-Type": "application/x-www-form-urlencoded",
                }
                try:
                    status = httpx.post(
                        f"http://127.0.0.1:{port}/slack/events", content=body, headers=headers
                    ).status_code
                    break
                except httpx.ConnectError:
                    time.sleep(0.2)
            assert status == 200
            for _ in range(50):
                if slack.responses():
                    break
                time.sleep(0.1)
            assert "Manifold geometry predicts" in str(slack.responses())  # the SAE paper
        finally:
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err[-2000:]
    assert "Loaded 19 bundled NeurIPS 2026 papers." in out
