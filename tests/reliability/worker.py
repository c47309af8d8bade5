"""A bot process for the reliability tests: recover, then run one day's digest round to Slack.

python -m tests.reliability.worker DB_URL SLACK_API_URL FIRST_DAY DAYS SEED INDEX_DIR
(every day from FIRST_DAY on, DAYS of them: a restarted bot catches up the days it missed)
"""

from __future__ import annotations

import asyncio
import random
import sys
from datetime import date, timedelta

from bot.adapters.slack.poster import SlackPoster
from bot.app import build
from bot.config import Settings
from bot.runtime.runner import DigestRunner
from digest.delivery.steps import Deliveries

LEASE = 1.0  # seconds


async def main(
    db_url: str, slack_url: str, first: str, days: int, seed: int, index_dir: str
) -> None:
    app = build(db_url, Settings(database_url=db_url, index_dir=index_dir))

    async def token(team: str) -> str:
        return "xoxb-reliability"

    poster = SlackPoster(token, base_url=slack_url, min_interval=0, backoff=0.01, timeout=2)
    lease = timedelta(seconds=LEASE)
    runner = DigestRunner(Deliveries(app.papers, app.worker, lease=lease), {"slack": poster})
    await runner.recover()  # claims whose lease lapsed (killed processes) are taken over
    channels = [c for c in app.store.channels.all() if c.ref.platform == "slack"]
    random.Random(seed).shuffle(channels)
    for offset in range(days):
        for ch in channels:
            await runner.run_channel(ch.id, date.fromisoformat(first) + timedelta(days=offset))
    for _ in range(20):  # claims of a process killed just before we started lapse within LEASE
        if not app.store.deliveries.unfinished():
            break
        await asyncio.sleep(LEASE / 2)
        await runner.recover()
    app.close()


if __name__ == "__main__":
    a = sys.argv
    asyncio.run(main(a[1], a[2], a[3], int(a[4]), int(a[5]), a[6]))
