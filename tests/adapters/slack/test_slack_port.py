"""With DIGESTBOT_SLACK_PORT=0 the system picks a free port; the log names that port, not 0.

Break that turns this red: start() logging self.config.port again ("Slack listening on
127.0.0.1:0").
"""

import logging

import httpx
import pytest

from bot.adapters.deps import Deps
from bot.adapters.slack.app import SlackConfig, build_slack
from tests.fakes.slack import FakeSlack

pytestmark = pytest.mark.asyncio


async def test_port_zero_logs_the_port_actually_bound(app, caplog):
    caplog.set_level(logging.INFO, logger="bot.adapters.slack.app")
    with FakeSlack() as slack:
        cfg = SlackConfig(
            bot_token="xoxb-test", signing_secret="s", api_url=slack.url, host="127.0.0.1", port=0
        )
        runtime = build_slack(cfg, app.store.engine, Deps(app.commands, app.channels))
        await runtime.start()
        try:
            port = runtime.port
            assert port and port > 0
            assert f"Slack listening on 127.0.0.1:{port}" in caplog.text
            assert "127.0.0.1:0" not in caplog.text
            async with httpx.AsyncClient() as http:  # the logged port is the one answering
                r = await http.post(
                    f"http://127.0.0.1:{port}/slack/events",
                    content="x=1",
                    headers={"X-Slack-Request-Timestamp": "1"},
                )
            assert r.status_code == 401  # unsigned: refused, but by this server
        finally:
            await runtime.stop()
