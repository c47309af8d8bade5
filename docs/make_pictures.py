"""Redraw the README's pictures of the demo digest: the console, Slack and Discord.

Run from the repository root: `python docs/make_pictures.py` (a scratch database each time).
docs/digest-console.svg is what `digestbot run` prints. docs/digest-slack.png and
docs/digest-discord.png are the payloads the bot posts for the same channel (the demo topics, the
same day), taken from the local fakes of the two Web APIs the tests use and drawn by
docs/chat_html.py, then photographed by headless Chromium (`apt-get install chromium
fonts-noto-color-emoji fonts-lato fonts-noto-core`). Neither tests nor CI need this script.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.text import Text

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path[:0] = [str(ROOT), str(DOCS)]  # the bot, the fakes in tests/, and chat_html

import chat_html  # noqa: E402

OUT = DOCS / "digest-console.svg"
#: Page widths in CSS pixels: a narrow Slack window; Discord just wider than its 520-pixel embeds.
WIDTHS = {"slack": 640, "discord": 620}
SCALE = 1.25  # sharp enough on high-density screens; a picture stays near 300-400 KB


def main() -> None:
    """Redraw every picture."""
    console()
    posts, time = chat_posts()
    pages = {"slack": chat_html.slack_page, "discord": chat_html.discord_page}
    for name, page in pages.items():
        shoot(page(posts[name], "lab", time), DOCS / f"digest-{name}.png", WIDTHS[name])


def console() -> None:
    """Start `digestbot run` on a fresh database, type `exit`, and draw what it printed."""
    with tempfile.TemporaryDirectory() as folder:
        env = {
            "DIGESTBOT_DATABASE_URL": f"sqlite:///{folder}/demo.db",
            "PATH": "",
            "DIGESTBOT_INDEX_DIR": f"{folder}/index",
            "DIGESTBOT_HEALTH_PORT": "0",
            "DIGESTBOT_SEMANTIC": "off",
            "COLUMNS": "100",
        }
        shown = subprocess.run(
            [sys.executable, "-m", "bot", "run"],
            input="exit\n",
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            cwd=folder,
        ).stdout
    lines = shown.split("papers>")[0].rstrip().splitlines()
    console = Console(record=True, width=100, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(Text("$ digestbot run", style="bold green"))
    for line in lines[:24]:
        console.print(Text(line), soft_wrap=True)
    console.print(Text("…", style="dim"))
    console.save_svg(str(OUT), title="digestbot run", unique_id="digest-console")  # no churn


def chat_posts() -> tuple[dict[str, list[dict]], str]:
    """The demo digest as the runner posts it to a Slack and a Discord channel (what arrived at
    the fakes), and the channel's digest time as the apps would show it."""
    import discord

    from bot.adapters.discord.poster import DiscordPoster
    from bot.adapters.slack.poster import SlackPoster
    from bot.app import build
    from bot.cli.channels import DEMO_TOPICS
    from bot.config import Settings
    from digest import BUNDLED_PAPERS
    from digest.clock.times import local_day
    from digest.models import ChannelRef, SubscriptionKind
    from tests.fakes.discord import FakeDiscord
    from tests.fakes.slack import FakeSlack

    refs = {"slack": ChannelRef("slack", "C1", "T1"), "discord": ChannelRef("discord", "111", "77")}
    with tempfile.TemporaryDirectory() as folder, FakeSlack() as slack, FakeDiscord() as fake:
        url = f"sqlite:///{folder}/demo.db"
        app = build(url, Settings(index_dir=f"{folder}/index", database_url=url, semantic="off"))
        app.papers.ingest(str(BUNDLED_PAPERS))  # what `digestbot run` loads on a fresh machine
        for ref in refs.values():
            for topic in DEMO_TOPICS:
                app.channels.follows.add(ref, SubscriptionKind.TOPIC, topic, "digestbot")
        slack.join("C1")
        discord.http.Route.BASE = fake.base

        async def post() -> None:
            async def token(team: str) -> str:
                return "xoxb-demo"

            client = discord.Client(intents=discord.Intents.none())
            await client.login("demo-token")
            try:
                runner = app.runner_over(
                    {
                        "slack": SlackPoster(token, slack.url, min_interval=0),
                        "discord": DiscordPoster(client),
                    }
                )
                for ref in refs.values():
                    channel = app.store.channels.get(ref)
                    outcome = await runner.run_channel(
                        channel.id, local_day(app.clock(), channel.timezone)
                    )
                    assert outcome.startswith("posted"), (ref, outcome)
            finally:
                await client.close()

        try:
            asyncio.run(post())
            hour, minute = map(int, app.store.channels.get(refs["slack"]).digest_time.split(":"))
        finally:
            app.close()
        posts = {"slack": slack.arrived("C1"), "discord": fake.arrived("111")}
    return posts, f"{(hour - 1) % 12 + 1}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


def shoot(page: str, out: Path, width: int) -> None:
    """Photograph ``page`` at ``width`` CSS pixels, as tall as its content, into ``out``."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        sys.exit("error: the Slack and Discord pictures need Chromium (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "page.html"
        measure = "<script>document.title = document.getElementById('shot').offsetHeight</script>"
        source.write_text(page.replace("</body>", measure + "</body>"), encoding="utf-8")
        flags = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={folder}/profile",
            f"--force-device-scale-factor={SCALE}",
        ]
        dom = subprocess.run(
            [*flags, f"--window-size={width},800", "--dump-dom", source.as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
        height = int(re.search(r"<title>(\d+)</title>", dom).group(1))
        subprocess.run(
            [*flags, f"--window-size={width},{height}", f"--screenshot={out}", source.as_uri()],
            capture_output=True,
            timeout=120,
            check=True,
        )
    print(f"{out.name}: {width}x{height} CSS px, {out.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
