"""A local fake of Discord's REST API for discord.py's HTTP client (Route.BASE points here)."""

from __future__ import annotations

import json
import re
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs

from bot.adapters.discord.limits import error_body, message_problems
from tests.fakes.discord_files import attachment_refused, multipart, stored
from tests.fakes.discord_history import UNKNOWN_CHANNEL, DiscordChannels, user
from tests.fakes.discord_interactions import InteractionEndpoints
from tests.fakes.http import LocalServer

BOT = {
    "id": "1000",
    "username": "digestbot",
    "discriminator": "0",
    "avatar": None,
    "bot": True,
    "global_name": None,
}


def _body(raw: bytes, content_type: str) -> tuple[dict, dict[int, tuple[str, bytes]]]:
    """The JSON a request carries (the body itself, or a multipart upload's payload_json part)
    and its uploaded files (``files[n]`` parts: n -> (name, bytes))."""
    if raw and "json" in content_type:
        return json.loads(raw), {}
    if raw and "multipart" in content_type:
        return multipart(raw, content_type)
    return {}, {}


def pinged(body: dict) -> list[str]:
    """The users a message body would ping: its content's <@id> mentions, as allowed."""
    ids = list(dict.fromkeys(re.findall(r"<@!?(\d+)>", body.get("content") or "")))
    am = body.get("allowed_mentions")
    if am is None:
        return ids
    listed = {str(u) for u in am.get("users") or []}
    return [u for u in ids if u in listed or "users" in (am.get("parse") or [])]


def pings_everyone(body: dict) -> bool:
    """Whether a message body would ping @everyone or @here."""
    am = body.get("allowed_mentions")
    said = re.search(r"@(everyone|here)\b", body.get("content") or "") is not None
    return said and (am is None or "everyone" in (am.get("parse") or []))


class FakeDiscord(DiscordChannels, InteractionEndpoints, LocalServer):
    """Records every call; ``fail[channel_id]`` holds (status, headers, body) answers used first.

    Strict like Discord: a body the shared validator rejects gets 400 / 50035; a message into a
    forum channel 400 / 50008; a thread where the channel forbids one 400 / 50024, and a second
    thread on one message 400 / 160004 (every refusal is in ``thread_refusals``), a thread
    where the bot lacks Create Public Threads (``no_thread_permission``) 403 / 50013, a thread
    named with no or over 100 characters 400 / 50035; a channel not in ``channels`` (or in ``gone``) 404 /
    10003. A thread's id is its starter message's id, as on Discord; ids are clock snowflakes
    and history pages like Discord's (see DiscordChannels). ``messages`` records what arrived.
    """

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict]] = []
        self.messages: dict[str, list[dict]] = defaultdict(list)
        self.fail: dict[str, list[tuple[int, dict, dict]]] = defaultdict(list)
        self.forums: set[str] = set()  # channels where messages cannot be sent (forum/media)
        self.no_threads: set[str] = set()  # channels where threads cannot be started
        self.no_thread_permission: set[str] = set()  # the bot lacks Create Public Threads here
        self.gone: set[str] = set()
        self.no_attach: set[str] = set()  # channels where the bot lacks Attach Files
        self.files: dict[str, list[dict]] = {}  # message id -> its attachments, with ``data``
        self.followup_files: list[list[dict]] = []  # attachments of interaction answers
        self.threads: dict[str, str] = {}  # thread id -> parent channel
        self.rejected: list[tuple[str, list[str]]] = []
        self.thread_refusals: list[tuple[str, int]] = []  # (message id, Discord's code)
        self.hang = 0.0  # seconds a "hang" fault stalls before answering
        self._init_channels()
        self._init_interactions()
        self.chaos = None  # (method, path) -> "429" | "500" | "drop" | None
        self.injected: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self.files: dict[str, tuple[bytes, int, str]] = {}  # CDN path -> (bytes, expiry, hm)
        self.downloads: list[str] = []  # CDN paths fetched (signed and not expired)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _do(self, method: str) -> None:
                if self.path.startswith("/attachments/"):  # the CDN: bytes, not JSON
                    status, data = fake.cdn(method, self.path)
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                body, files = _body(raw, self.headers.get("Content-Type") or "")
                status, headers, data = fake.answer(
                    method, self.path.split("/api/v10", 1)[-1], body, files
                )
                if headers.pop("X-Fake-Hang", None):
                    time.sleep(fake.hang)
                if headers.pop("X-Fake-Drop", None):
                    self.close_connection = (
                        True  # processed, but the connection dies before any answer
                    )
                    return
                out = b"" if status == 204 else json.dumps(data).encode()
                self.send_response(status)
                kind = {} if status == 204 else {"Content-Type": "application/json"}
                for k, v in {**kind, **headers}.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def do_GET(self) -> None:  # noqa: N802
                self._do("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._do("POST")

            def do_PATCH(self) -> None:  # noqa: N802
                self._do("PATCH")

            def do_PUT(self) -> None:  # noqa: N802
                self._do("PUT")

            def do_DELETE(self) -> None:  # noqa: N802
                self._do("DELETE")

            def log_message(self, *a: object) -> None:
                pass

        self._serve(Handler)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    def answer(
        self, method: str, path: str, body: dict, files: dict | None = None
    ) -> tuple[int, dict, dict | list]:
        path, _, qs = path.partition("?")
        query = {k: v[0] for k, v in parse_qs(qs).items()}
        if files:  # what arrived, for interaction replies' attachments (name and text)
            arrived = [
                {"filename": n, "text": data.decode(errors="replace")} for n, data in files.values()
            ]
            body = {**body, "_files": arrived}
        with self._lock:
            self.calls.append((method, path, body))
            if m := re.fullmatch(r"/channels/(\d+)/messages", path):
                channel = m.group(1)
                if method == "POST" and self.fail.get(channel):
                    return self.fail[channel].pop(0)
                if channel in self.gone or not self.known(channel):
                    return UNKNOWN_CHANNEL
                fault = self.chaos(method, path) if self.chaos else None
                if fault:
                    self.injected[fault] += 1
                if fault == "429":
                    return (
                        429,
                        {"Via": "1.1 google"},
                        {"message": "slow down", "retry_after": 0.01, "global": False},
                    )
                if fault == "500":
                    return 500, {}, {"message": "internal error", "code": 0}
                if method == "POST" and body.get("enforce_nonce"):
                    same = [
                        x
                        for x in self.messages[channel]
                        if x.get("nonce") == body.get("nonce")
                        and self.age(x["id"]) < self.nonce_window
                    ]
                    if same:  # Discord answers a recent repeated nonce with the message it made
                        return 200, {}, same[0]
                if method == "GET":
                    return self.history(channel, query)
                if refused := self._refuse(channel, body):
                    return refused
                if refused := attachment_refused(self, channel, body, files or {}):
                    self.rejected.append((channel, [str(refused[2].get("message"))]))
                    return refused
                mid = self._next()
                msg = {
                    "id": mid,
                    "channel_id": channel,
                    "author": BOT,
                    "content": body.get("content") or "",
                    "timestamp": self.stamp(mid),
                    "edited_timestamp": None,
                    "tts": False,
                    # whom Discord would ping: what the content mentions that allowed_mentions
                    # lets through (no allowed_mentions: Discord parses every mention)
                    "mention_everyone": pings_everyone(body),
                    "mentions": [user(u) for u in pinged(body)],
                    "allowed_mentions": body.get("allowed_mentions"),
                    "mention_roles": [],
                    "attachments": [],
                    "embeds": body.get("embeds", []),
                    "components": body.get("components", []),
                    "pinned": False,
                    "type": 0,
                    "nonce": body.get("nonce"),
                }
                if files:  # what arrived, bytes and all (``data``); Discord answers without
                    kept = stored(body, files, mid)
                    self.files[mid] = kept
                    msg["attachments"] = [{k: v for k, v in a.items() if k != "data"} for a in kept]
                self.messages[channel].append(msg)
                if fault == "hang":
                    return 200, {"X-Fake-Hang": "1"}, msg
                return 200, ({"X-Fake-Drop": "1"} if fault == "drop" else {}), msg
            if method == "GET" and (m := re.fullmatch(r"/channels/(\d+)", path)):
                found = self.described.get(m.group(1))
                return (
                    UNKNOWN_CHANNEL
                    if found is None or m.group(1) in self.gone
                    else (200, {}, found)
                )
            if m := re.fullmatch(r"/channels/(\d+)/messages/(\d+)/threads", path):
                if refused := self._refuse_thread(m.group(1), m.group(2), body):
                    self.thread_refusals.append((m.group(2), refused[2]["code"]))
                    return refused
                tid = m.group(2)
                self.threads[tid] = m.group(1)
                self.channels.add(tid)
                return (
                    201,
                    {},
                    {
                        "id": tid,
                        "type": 11,
                        "guild_id": "77",
                        "name": body.get("name", "t"),
                        "parent_id": m.group(1),
                        "owner_id": BOT["id"],
                        "member_count": 1,
                        "message_count": 0,
                        "thread_metadata": {
                            "archived": False,
                            "locked": False,
                            "auto_archive_duration": 1440,
                            "archive_timestamp": "2026-12-01T09:00:00+00:00",
                        },
                    },
                )
            webhook = method in ("POST", "PATCH") and re.fullmatch(
                r"/webhooks/\d+/[^/]+(/messages/(@original|\d+))?", path
            )
            if webhook and (refused := attachment_refused(self, "", body, files or {})):
                return refused  # an interaction's follow-up takes files as a message does
            if (handled := self._interaction(method, path, body)) is not None:
                if webhook and files and handled[0] == 200:
                    self.followup_files.append(stored(body, files, str(handled[2].get("id", 0))))
                return handled
            if (handled := self._commands(method, path, body)) is not None:
                return handled
            if path == "/oauth2/applications/@me":
                return (
                    200,
                    {},
                    {
                        "id": "2000",
                        "name": "digestbot",
                        "icon": None,
                        "description": "",
                        "bot_public": True,
                        "bot_require_code_grant": False,
                        "owner": user("1"),
                        "verify_key": "00",
                        "flags": 0,
                        "summary": "",
                    },
                )
            if path == "/users/@me":
                return 200, {}, BOT
            if (
                path == "/gateway/bot" and method == "GET"
            ):  # AutoShardedClient asks before connecting
                from discord.gateway import DiscordWebSocket  # the gateway a test points it at

                limit = {"total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1}
                url = str(DiscordWebSocket.DEFAULT_GATEWAY)
                return 200, {}, {"url": url, "shards": 1, "session_start_limit": limit}
            if path == "/users/@me/channels":
                uid = body.get("recipient_id", "0")
                self.channels.add(f"9{uid}")
                return (
                    200,
                    {},
                    {
                        "id": f"9{uid}",
                        "type": 1,
                        "recipients": [user(uid)],
                        "last_message_id": None,
                    },
                )
            if m := re.fullmatch(r"/users/(\d+)", path):
                return 200, {}, user(m.group(1))
            return 404, {}, {"message": "Unknown", "code": 0}

    def attach(self, filename: str, data: bytes, channel: str = "111", life: int = 86400) -> dict:
        """A file a user attached: Discord's resolved-attachment payload, its URL on the fake
        CDN signed as Discord signs it (``ex`` expiry in hex seconds, ``is``, ``hm``)."""
        aid = self._next()
        path = f"/attachments/{channel}/{aid}/{filename}"
        expiry = int(self.now().timestamp()) + life
        hm = f"{hash((path, expiry)) & 0xFFFFFFFF:08x}"
        self.files[path] = (data, expiry, hm)
        query = f"ex={expiry:x}&is={int(self.now().timestamp()):x}&hm={hm}&"
        url = f"http://127.0.0.1:{self.port}{path}?{query}"
        return {
            "id": aid,
            "filename": filename,
            "size": len(data),
            "url": url,
            "proxy_url": url,
            "content_type": "text/plain; charset=utf-8",
        }

    def cdn(self, method: str, raw_path: str) -> tuple[int, bytes]:
        """The CDN's answer: the bytes for a GET of a signed URL that has not expired, else 404
        with Discord's text (an unsigned or stale link is refused as on the real CDN)."""
        path, _, qs = raw_path.partition("?")
        query = {k: v[0] for k, v in parse_qs(qs).items()}
        with self._lock:
            self.calls.append((method, path, {}))
            held = self.files.get(path)
            fresh = (
                held is not None
                and int(query.get("ex", "0"), 16) == held[1] > self.now().timestamp()
            )
            if method != "GET" or not fresh or query.get("hm") != held[2]:
                return 404, b"This content is no longer available."
            self.downloads.append(path)
            return 200, held[0]

    def _refuse(self, channel: str, body: dict) -> tuple[int, dict, dict] | None:
        """Discord's 400 for a message it would not accept; None when it would."""
        if channel in self.forums:
            return 400, {}, {"message": "Cannot send messages in a non-text channel", "code": 50008}
        problems = message_problems(body)
        if problems:
            self.rejected.append((channel, problems))
            return 400, {}, error_body(problems)
        return None

    def _refuse_thread(
        self, channel: str, message_id: str, body: dict | None = None
    ) -> tuple[int, dict, dict] | None:
        name = (body or {}).get("name")
        if not isinstance(name, str) or not 1 <= len(name) <= 100:  # Discord: 1–100 characters
            return (
                400,
                {},
                {
                    "message": "Invalid Form Body",
                    "code": 50035,
                    "errors": {"name": {"_errors": [{"code": "BASE_TYPE_BAD_LENGTH"}]}},
                },
            )
        if channel in self.gone or not self.known(channel):
            return UNKNOWN_CHANNEL
        if channel in self.no_thread_permission:
            return 403, {}, {"message": "Missing Permissions", "code": 50013}
        if channel in self.no_threads or channel in self.threads:
            return 400, {}, {"message": "Cannot execute action on this channel type", "code": 50024}
        if message_id in self.threads:
            return (
                400,
                {},
                {"message": "A thread has already been created for this message", "code": 160004},
            )
        if not any(x["id"] == message_id for x in self.messages[channel]):
            return 404, {}, {"message": "Unknown Message", "code": 10008}
        return None

    def arrived(self, channel: str) -> list[dict]:
        """Every message that actually landed in a channel or a thread, in order."""
        return list(self.messages.get(channel, []))

    def posts(self, channel: str) -> list[dict]:
        return [b for m, p, b in self.calls if m == "POST" and p == f"/channels/{channel}/messages"]
