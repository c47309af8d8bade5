"""The channel side of the Discord fake, as strict as Discord: ids are snowflakes from the clock,
Get Channel Messages pages newest first by ``before``/``after`` with ``limit`` 1-100, Get
Channel answers what ``described`` holds, and a channel or thread the guild does not have
answers 404 / 10003 Unknown Channel."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from discord.utils import snowflake_time, time_snowflake

#: The fake guild's text channels the tests use; DMs and threads join when they are opened.
GUILD_CHANNELS = ("111", "222", "333", "444", "555", "6001", "7001")
UNKNOWN_CHANNEL = (404, {}, {"message": "Unknown Channel", "code": 10003})


def user(uid: str) -> dict:
    return {
        "id": uid,
        "username": f"user{uid}",
        "discriminator": "0",
        "avatar": None,
        "global_name": None,
    }


def _invalid_limit(raw: str) -> tuple[int, dict, dict]:
    errors = {"limit": {"_errors": [{"code": "NUMBER_TYPE_MAX", "message": f"{raw} > 100"}]}}
    return 400, {}, {"message": "Invalid Form Body", "code": 50035, "errors": errors}


class DiscordChannels:
    """Needs ``messages`` from the fake it is mixed into."""

    def _init_channels(self) -> None:
        self.channels: set[str] = set(GUILD_CHANNELS)
        #: What Get Channel answers for a channel (its JSON, overwrites and all); one not here
        #: (or in ``gone``) is 404 / 10003, as for a channel the bot cannot see.
        self.described: dict[str, dict] = {}
        self._last_id = 0
        self.clock_skew = 0.0  # seconds Discord's clock is ahead of the host's (negative: behind)
        self.nonce_window = 300.0  # enforce_nonce dedupes "in the past few minutes" only

    def _next(self) -> str:
        """A fresh snowflake from the clock, increasing, as Discord makes them."""
        now = datetime.now(UTC) + timedelta(seconds=self.clock_skew)
        self._last_id = max(time_snowflake(now), self._last_id + 1)
        return str(self._last_id)

    @staticmethod
    def stamp(snowflake: str) -> str:
        """The ISO time a snowflake was made at (a message's ``timestamp``)."""
        return snowflake_time(int(snowflake)).isoformat()

    @staticmethod
    def age(snowflake: str) -> float:
        """Seconds since a snowflake was made."""
        return (datetime.now(UTC) - snowflake_time(int(snowflake))).total_seconds()

    def known(self, channel: str) -> bool:
        return channel in self.channels

    def chatter(self, channel: str, n: int, uid: str = "42") -> None:
        """``n`` messages from another user arrive in ``channel`` (a busy channel)."""
        for i in range(n):
            mid = self._next()
            self.messages[channel].append(
                {
                    "id": mid,
                    "channel_id": channel,
                    "author": user(uid),
                    "content": f"chat {i}",
                    "timestamp": self.stamp(mid),
                    "edited_timestamp": None,
                    "tts": False,
                    "mention_everyone": False,
                    "mentions": [],
                    "mention_roles": [],
                    "attachments": [],
                    "embeds": [],
                    "components": [],
                    "pinned": False,
                    "type": 0,
                }
            )

    def history(self, channel: str, query: dict[str, str]) -> tuple[int, dict, dict | list]:
        """Get Channel Messages: at most ``limit`` (1-100, default 50), newest first."""
        raw = query.get("limit", "50")
        if not raw.isdigit() or not 1 <= int(raw) <= 100:
            return _invalid_limit(raw)
        limit, stored = int(raw), self.messages.get(channel, [])
        if "after" in query:  # the ``limit`` oldest messages after the id, answered newest first
            after = int(query["after"])
            return 200, {}, list(reversed([m for m in stored if int(m["id"]) > after][:limit]))
        before = int(query.get("before") or 1 << 63)
        older = [m for m in stored if int(m["id"]) < before]
        return 200, {}, list(reversed(older[-limit:]))
