"""`digestbot` with discord.py pointed at local fakes (REST base and gateway), for bench/load.py.

discord.py has no setting for its endpoints; this sets them from two environment variables and
then runs the real command line unchanged (``python -m bench.load_bot run``).
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    """Point discord.py at LOAD_DISCORD_REST / LOAD_DISCORD_GATEWAY when set; run `digestbot`."""
    rest, gateway = os.environ.get("LOAD_DISCORD_REST"), os.environ.get("LOAD_DISCORD_GATEWAY")
    if rest or gateway:  # only then: a Slack-only run must not pay for importing discord.py
        import discord.gateway
        import discord.http
        import yarl

        if rest:
            discord.http.Route.BASE = rest
        if gateway:
            discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway)
    from bot.cli.main import main as digestbot

    sys.argv = ["digestbot", *sys.argv[1:]]
    raise SystemExit(digestbot())


if __name__ == "__main__":
    main()
