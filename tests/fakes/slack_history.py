"""The message side of the Slack fake, as strict as Slack: history and replies page by cursor
(newest first, ``limit``, ``oldest``/``latest``), ``chat.update`` edits only the bot's own
existing messages, ``chat.postEphemeral`` reaches only members of a known channel."""

from __future__ import annotations

import base64
import time

BOT_USER, BOT_ID = "UBOT", "B1"
HISTORY_DEFAULT, REPLIES_DEFAULT, MAX_LIMIT = 100, 1000, 999  # Slack's documented limits


def _cursor(ts: str) -> str:
    return base64.b64encode(f"next_ts:{ts}".encode()).decode()


def _after_cursor(cursor: str) -> str | None:
    try:
        return base64.b64decode(cursor.encode()).decode().removeprefix("next_ts:")
    except ValueError:
        return None


def _limit(args: dict, default: int) -> int:
    return max(1, min(int(args.get("limit") or default), MAX_LIMIT))


def _in_range(ts: str, args: dict) -> bool:
    """Slack's ``oldest``/``latest`` window: exclusive unless ``inclusive``."""
    inclusive = str(args.get("inclusive", "")).lower() in ("1", "true")
    t, lo, hi = float(ts), float(args.get("oldest") or 0), float(args.get("latest") or 9e12)
    return (lo <= t <= hi) if inclusive else (lo < t < hi)


class SlackMessages:
    """Needs ``messages``, ``gone``, ``members`` and ``ims`` from the fake it is mixed into."""

    def _init_messages(self) -> None:
        self._last_ts = 0.0
        self.clock_skew = 0.0  # seconds Slack's clock is ahead of the host's (negative: behind)
        self.known: set[str] = set()  # channels that exist besides those with messages

    def new_ts(self) -> str:
        """A message timestamp from the clock, unique and increasing, as Slack makes them."""
        self._last_ts = max(time.time() + self.clock_skew, self._last_ts + 0.000001)
        return f"{self._last_ts:.6f}"

    def chatter(self, channel: str, n: int, user: str = "U2") -> None:
        """``n`` messages from someone else arrive in ``channel`` (a busy channel)."""
        for i in range(n):
            self.messages[channel].append({"ts": self.new_ts(), "user": user, "text": f"chat {i}"})

    def exists(self, channel: str) -> bool:
        """Slack knows the channel: it has messages or members, is declared, or is an open IM."""
        if channel in self.gone:
            return False
        if channel[:1] in ("D", "U", "W"):  # an IM exists once opened (see FakeSlack.open_im)
            return channel in self.ims.values()
        return channel in self.messages or channel in self.members or channel in self.known

    def _page(self, found: list[dict], args: dict, default: int) -> dict:
        """One page of ``found`` (already in answer order) from the cursor on."""
        if args.get("cursor"):
            after = _after_cursor(str(args["cursor"]))
            idx = next((i for i, m in enumerate(found) if m["ts"] == after), None)
            if idx is None:
                return {"ok": False, "error": "invalid_cursor"}
            found = found[idx + 1 :]
        page, rest = found[: _limit(args, default)], found[_limit(args, default) :]
        more = {"next_cursor": _cursor(page[-1]["ts"]) if rest else ""}
        return {"ok": True, "messages": page, "has_more": bool(rest), "response_metadata": more}

    def history(self, args: dict) -> dict:
        """conversations.history: top-level messages in the window, newest first, by pages."""
        channel = str(args.get("channel", ""))
        if channel in self.gone:
            return {"ok": False, "error": "channel_not_found"}
        top = [m for m in self.messages.get(channel, []) if not m.get("thread_ts")]
        found = [m for m in reversed(top) if _in_range(m["ts"], args)]
        return self._page(found, args, HISTORY_DEFAULT)

    def replies(self, args: dict) -> dict:
        """conversations.replies: the parent, then its replies oldest first, by pages."""
        channel, ts = str(args.get("channel", "")), args.get("ts")
        if channel in self.gone:
            return {"ok": False, "error": "channel_not_found"}
        stored = self.messages.get(channel, [])
        if not any(m["ts"] == ts and not m.get("thread_ts") for m in stored):
            return {"ok": False, "error": "thread_not_found"}
        thread = [m for m in stored if m["ts"] == ts or m.get("thread_ts") == ts]
        return self._page([m for m in thread if _in_range(m["ts"], args)], args, REPLIES_DEFAULT)

    def update(self, args: dict) -> dict:
        """chat.update: only an existing message the bot posted; text and blocks really change."""
        channel = str(args.get("channel", ""))
        if channel in self.gone:
            return {"ok": False, "error": "channel_not_found"}
        msg = next((m for m in self.messages.get(channel, []) if m["ts"] == args.get("ts")), None)
        if msg is None:
            return {"ok": False, "error": "message_not_found"}
        if msg.get("user") != BOT_USER:
            return {"ok": False, "error": "cant_update_message"}
        msg["text"] = args.get("text") or msg.get("text")
        if "blocks" in args:  # Slack keeps the old blocks when none are sent
            msg["blocks"] = args["blocks"]
        msg["edited"] = {"user": BOT_USER, "ts": self.new_ts()}
        return {"ok": True, "channel": channel, "ts": msg["ts"], "text": msg["text"]}

    def ephemeral_refused(self, args: dict) -> dict | None:
        """chat.postEphemeral reaches a member of a known channel only."""
        channel, user = str(args.get("channel", "")), str(args.get("user", ""))
        if not self.exists(channel):
            return {"ok": False, "error": "channel_not_found"}
        if not channel.startswith("D") and user not in self.members.get(channel, ()):
            return {"ok": False, "error": "user_not_in_channel"}
        return None
