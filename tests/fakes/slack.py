"""A local fake of the Slack Web API: records every call, answers like Slack, fails on demand."""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from bot.adapters.slack.limits import error_code, message_problems, view_problems
from tests.fakes.http import LocalServer
from tests.fakes.slack_files import (
    complete_ok,
    manifest_scopes,
    upload_info,
    upload_ok,
    upload_refused,
)
from tests.fakes.slack_history import BOT_ID, BOT_USER, SlackMessages
from tests.fakes.slack_limits import mention_problems, mentioned

#: The fake workspace's people at start (tests add more with ``add_user``): id -> handle.
ROSTER = {"U1": "ann", "U2": "bea", "UADMIN": "boss", BOT_USER: "digestbot"}


def _blocks(args: dict) -> list:
    """A post's blocks, sent as a list or as JSON text (form-encoded calls)."""
    blocks = args.get("blocks") or []
    return json.loads(blocks) if isinstance(blocks, str) else blocks


class FakeSlack(SlackMessages, LocalServer):
    """``fail[(method, channel)]`` is a list of (status, headers, body) answered before success.

    Strict like Slack: a payload the shared validator rejects gets ``invalid_blocks`` (or
    ``msg_too_long``), a reply to an unknown thread gets ``thread_not_found``, an archived or
    unknown channel (``gone``) gets ``channel_not_found``. ``messages`` records what arrived.
    Posting needs a channel Slack knows (``join``, ``known``, ``members``, or a DM): else
    ``channel_not_found``; one the bot is not in (not ``joined``) gets ``not_in_channel``. As in
    Slack, a DM is a user of the workspace (``users``: id -> handle, ``add_user``) or an IM that
    was opened (``conversations.open``, or ``open_im`` for one the user opened by writing to the
    app): a user id posts into that user's IM (opening it) and the message is recorded there;
    any other ``U…``/``W…``/``D…`` id gets ``channel_not_found`` (``conversations.open`` and
    ``users.info``: ``user_not_found``). Every refusal is recorded in ``refusals``. A ``public``
    channel takes posts without the bot in it (chat:write.public) but refuses it its history.
    ``chaos`` faults: "429", "500" (not stored), "500-stored" (stored, then 500), "timeout",
    "drop" (stored, no answer).
    History, replies, updates and ephemeral messages follow Slack's rules (see SlackMessages).
    """

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []
        self.messages: dict[str, list[dict]] = defaultdict(list)
        self.fail: dict[tuple[str, str], list[tuple[int, dict, dict]]] = defaultdict(list)
        self.admins: set[str] = set()
        self.gone: set[str] = set()
        self.joined: set[str] = set()  # channels the bot is a member of (see join())
        # public channels: chat:write.public lets the app post without joining, but reading
        # history or replies still needs membership (not_in_channel)
        self.public: set[str] = set()
        self.members: dict[str, set[str]] = defaultdict(set)  # conversations.members
        # private channels: conversations.info says is_private, and describes one only to a
        # member app (channel_not_found otherwise, as Slack answers)
        self.private: set[str] = set()
        self.uploads: dict[str, dict] = {}  # file id -> name, content, channel (once completed)
        # The bot token's scopes: what the app manifest asks for (tests remove one to see the
        # missing_scope answer); see tests/fakes/slack_files.py for the upload rules.
        self.scopes: set[str] = manifest_scopes()
        self.rejected: list[tuple[str, list[str]]] = []
        self.chaos = None  # (method, args) -> "429" | "500" | "timeout" | None
        self.latency = 0.0  # seconds added to every answer (to widen crash windows)
        self.injected: dict[str, int] = defaultdict(int)
        self.users: dict[str, str] = dict(ROSTER)  # the workspace's people: id -> handle
        self.ims: dict[str, str] = {}  # user id -> the app's IM with them (D…), once opened
        self.refusals: list[tuple[str, str, str]] = []  # (method, channel or user, error)
        self.files: dict[str, dict] = {}  # file id -> a file people shared (see share_file)
        self.tokens = {"xoxb-test", "xoxb-installed"}  # tokens a private file URL accepts
        self.fetched: list[str] = []  # file ids downloaded with a valid token
        self._init_messages()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server API
                if self.path.startswith(("/files-pri/", "/signin")):  # files, not the Web API
                    status, headers, data = fake.download(self.path, self.headers)
                    self.send_response(status)
                    for k, v in {**headers, "Content-Length": str(len(data))}.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.do_POST()

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length)
                parts = urlsplit(self.path)
                if "/upload/" in parts.path:  # a file's bytes, not a form (a PNG is not UTF-8)
                    upload = "upload-" + parts.path.rsplit("/", 1)[-1]
                    status, headers, body = fake.answer(upload, {"bytes": data})
                    status = status if body.get("ok") else 404  # the upload URL is not the API
                    self._send(status, headers, body)
                    return
                raw = data.decode()
                args = {k: v[0] for k, v in parse_qs(parts.query).items()}
                if "json" in (self.headers.get("Content-Type") or ""):
                    args.update(json.loads(raw or "{}"))
                else:
                    args.update({k: v[0] for k, v in parse_qs(raw).items()})
                for key in ("blocks", "metadata"):
                    if isinstance(args.get(key), str):
                        args[key] = json.loads(args[key])
                status, headers, body = fake.answer(parts.path.rsplit("/", 1)[-1], args)
                self._send(status, headers, body)

            def _send(self, status: int, headers: dict, body: dict) -> None:
                if fake.latency:
                    time.sleep(fake.latency)
                if headers.pop("X-Fake-Drop", None):
                    self.close_connection = True  # processed, but the answer never comes
                    return
                if headers.pop("X-Fake-Delay", None):
                    time.sleep(
                        1.5
                    )  # answered too late: the client has given up, but it was processed
                data = json.dumps(body).encode()
                self.send_response(status)
                for k, v in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *a: object) -> None:
                pass

        self._serve(Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def answer(self, method: str, args: dict) -> tuple[int, dict, dict]:
        with self._lock:
            self.calls.append((method, args))
            queue = self.fail.get((method, str(args.get("channel", ""))))
            if queue:
                return queue.pop(0)
            fault = self.chaos(method, args) if self.chaos else None
            if fault:
                self.injected[fault] += 1
            if fault == "429":
                return 429, {"Retry-After": "0"}, {"ok": False, "error": "ratelimited"}
            if fault == "500":
                return 500, {}, {"ok": False, "error": "internal_error"}
            if fault == "500-stored":  # Slack stored the message, then failed to answer
                refused = self._refuse(method, args)
                if refused is None:
                    self._ok(method, args)
                return 500, {}, {"ok": False, "error": "internal_error"}
            refused = self._refuse(method, args)
            if refused is not None:
                where = str(args.get("channel") or args.get("users") or args.get("user") or "")
                self.refusals.append((method, where, str(refused.get("error"))))
                return 200, {}, refused
            if fault == "timeout":
                return 200, {"X-Fake-Delay": "1"}, self._ok(method, args)
            if fault == "drop":
                return 200, {"X-Fake-Drop": "1"}, self._ok(method, args)
            return 200, {}, self._ok(method, args)

    def _refuse(self, method: str, args: dict) -> dict | None:
        """Slack's answer to a payload it would not accept; None when it would."""
        if (refused := self._refuse_more(method, args)) is not None:
            return refused
        if method in ("chat.postMessage", "chat.update"):
            channel = str(args.get("channel", ""))
            if refused := self.membership_refused(channel):
                return refused
            problems = message_problems(args.get("blocks") or [], args.get("text") or "")
            if problems:
                self.rejected.append((channel, problems))
                return {"ok": False, "error": error_code(problems), "errors": problems}
            # Stricter than Slack, which shows a malformed token as text and pings for
            # <!channel>: the bot never sends either, so a test that makes it fails loudly.
            if problems := mention_problems(_blocks(args), args.get("text") or ""):
                self.rejected.append((channel, problems))
                return {"ok": False, "error": "invalid_blocks", "errors": problems}
            parent = args.get("thread_ts")
            if parent and not any(m["ts"] == parent for m in self.messages.get(channel, [])):
                return {"ok": False, "error": "thread_not_found"}
        if method in ("conversations.open", "users.info"):
            who = str(args.get("users") or args.get("user") or "")
            if who not in self.users:
                return {"ok": False, "error": "user_not_found"}
        if method in ("conversations.history", "conversations.replies"):
            channel = str(args.get("channel", ""))
            if channel[:1] in ("D", "U", "W") and not self.exists(channel):
                return {"ok": False, "error": "channel_not_found"}
            if channel in self.public and channel not in self.joined:  # reading needs membership
                return {"ok": False, "error": "not_in_channel"}
        if method == "views.publish":
            view = args.get("view")
            view = json.loads(view) if isinstance(view, str) else view or {}
            if problems := view_problems(view):
                self.rejected.append(("view", problems))
                return {"ok": False, "error": "invalid_arguments", "errors": problems}
        return None

    def _ok(self, method: str, args: dict) -> dict:
        if (answer := self._ok_more(method, args)) is not None:
            return answer
        if method == "chat.postMessage":
            ts, channel = self.new_ts(), str(args["channel"])
            if channel[:1] in ("U", "W"):  # Slack posts into the app's IM with that user
                channel = self.open_im(channel)
            msg = {
                "ts": ts,
                "user": BOT_USER,
                "bot_id": BOT_ID,
                **{k: args.get(k) for k in ("text", "blocks", "thread_ts", "metadata")},
                # whom it pings: the <@U…> tokens of its text and blocks
                "mentions": mentioned(_blocks(args), args.get("text") or ""),
            }
            self.messages[channel].append(msg)
            return {"ok": True, "channel": channel, "ts": ts, "message": msg}
        if method == "chat.update":
            return self.update(args)
        if method == "conversations.history":
            return self.history(args)
        if method == "conversations.replies":
            return self.replies(args)
        if method == "conversations.open":
            return {"ok": True, "channel": {"id": self.open_im(str(args["users"]))}}
        if method == "users.info":
            user = args.get("user", "")
            return {
                "ok": True,
                "user": {
                    "id": user,
                    "name": self.users[user],
                    "is_admin": user in self.admins,
                    "is_owner": False,
                },
            }
        if method == "auth.test":
            return {"ok": True, "team_id": "T1", "user_id": "UBOT", "bot_id": "B1", "team": "Lab"}
        if method == "oauth.v2.access":
            return {
                "ok": True,
                "app_id": "A1",
                "authed_user": {"id": "U1"},
                "scope": "commands,chat:write",
                "token_type": "bot",
                "access_token": "xoxb-installed",
                "bot_user_id": "UBOT",
                "team": {"id": "T7", "name": "Lab"},
                "enterprise": None,
                "is_enterprise_install": False,
            }
        if method == "views.publish":
            return {"ok": True, "view": {"id": "V1"}}
        return {"ok": True}

    def join(self, *channels: str) -> None:
        """The channels exist and the bot was invited to them (as `/invite @digestbot` does)."""
        self.known.update(channels)
        self.joined.update(channels)

    def add_user(self, user: str, name: str = "") -> None:
        """``user`` joins the workspace (their handle defaults to the id in lower case)."""
        self.users[user] = name or user.lower()

    def open_im(self, user: str) -> str:
        """The app's IM with ``user`` of the workspace, opened now if it was not (its D… id)."""
        if user not in self.users:
            raise KeyError(f"{user} is not a user of the fake workspace")
        return self.ims.setdefault(user, f"D{user}")

    def membership_refused(self, channel: str) -> dict | None:
        """Slack's answer to posting where the bot cannot: unknown channel, or not a member."""
        if channel[:1] in ("U", "W"):  # a user id: the app's IM with a user of the workspace
            ok = channel in self.users and channel not in self.gone
            return None if ok else {"ok": False, "error": "channel_not_found"}
        if not self.exists(channel):
            return {"ok": False, "error": "channel_not_found"}
        if not channel.startswith("D") and channel not in self.joined | self.public:
            return {"ok": False, "error": "not_in_channel"}
        return None

    def responses(self) -> list[dict]:
        """What listeners sent to response URLs (we hand out {url}respond/...)."""
        return [a for m, a in self.calls if m.startswith("resp-")]

    def posts(self, channel: str | None = None) -> list[dict]:
        return [
            a
            for m, a in self.calls
            if m == "chat.postMessage" and (channel is None or a["channel"] == channel)
        ]

    def arrived(self, channel: str) -> list[dict]:
        """Every message that actually landed in a channel (threads included), in order."""
        return list(self.messages.get(channel, []))

    # Added for the Slack app's tests (issue 11): files, membership, ephemeral and response URLs.

    def _refuse_more(self, method: str, args: dict) -> dict | None:
        """Response-URL messages and ephemeral messages are checked like any other message."""
        if method == "chat.postEphemeral" and (refused := self.ephemeral_refused(args)):
            return refused
        if method.startswith("resp-") or method == "chat.postEphemeral":
            problems = message_problems(args.get("blocks") or [], args.get("text") or "")
            if problems:
                self.rejected.append((method, problems))
                return {"ok": False, "error": error_code(problems), "errors": problems}
        if method.startswith(("files.", "upload-")):
            return upload_refused(self, method, args)
        if method == "views.open":
            return modal_refused(self, args)
        return None

    def _ok_more(self, method: str, args: dict) -> dict | None:
        if method == "files.list":
            return self.files_list(args)
        if method == "files.info":
            if "files:read" not in self.scopes:
                return {"ok": False, "error": "missing_scope", "needed": "files:read"}
            if str(args.get("file")) in self.uploads:  # the app's own upload: where it is shared
                return upload_info(self, str(args.get("file")))
            held = self.files.get(str(args.get("file")))
            if held is None:
                return {"ok": False, "error": "file_not_found"}
            return {"ok": True, "file": {k: v for k, v in held.items() if k != "content"}}
        if method == "conversations.info":
            channel = str(args.get("channel", ""))
            if channel in self.gone or (channel in self.private and channel not in self.joined):
                return {"ok": False, "error": "channel_not_found"}
            private = channel in self.private
            return {
                "ok": True,
                "channel": {
                    "id": channel,
                    "is_channel": not private,
                    "is_group": private,
                    "is_private": private,
                    "is_im": channel.startswith("D"),
                },
            }
        if method == "conversations.members":
            return {
                "ok": True,
                "members": sorted(self.members.get(args.get("channel", ""), ())),
                "response_metadata": {"next_cursor": ""},
            }
        if method == "files.getUploadURLExternal" or method.startswith("upload-"):
            return upload_ok(self, method, args)
        if method == "files.completeUploadExternal":
            return complete_ok(self, args)
        if method == "views.open":
            view = args["view"]
            view = json.loads(view) if isinstance(view, str) else view
            self.__dict__.setdefault("modals", []).append(view)
            return {"ok": True, "view": {"id": f"V{len(self.modals)}", **view}}
        return None

    def share_file(self, channel: str, user: str, name: str, data: bytes, age: float = 0) -> dict:
        """``user`` shares a file in ``channel`` (``age`` seconds ago), as Slack keeps it."""
        fid = f"F{user}{len(self.files) + 1}"
        url = f"http://127.0.0.1:{self.port}/files-pri/T1-{fid}/download/{name}"
        self.files[fid] = {
            "id": fid,
            "name": name,
            "title": name,
            "user": user,
            "channels": [channel],
            "created": int(time.time() - age),
            "size": len(data),
            "filetype": "text",
            "mimetype": "text/plain",
            "url_private": url.replace("/download/", "/"),
            "url_private_download": url,
            "content": data,
        }
        return self.files[fid]

    def files_list(self, args: dict) -> dict:
        """``files.list``: the files the token can see, newest first, filtered as Slack filters
        (channel, user, ts_from, count); without files:read, ``missing_scope``."""
        if "files:read" not in self.scopes:
            return {"ok": False, "error": "missing_scope", "needed": "files:read"}
        since = int(float(args.get("ts_from") or 0))
        # the app's own uploads count once completed into a channel (Slack lists shared files)
        shared = [
            {
                "id": fid,
                "name": u["name"],
                "user": "UBOT",
                "channels": [u["channel"]],
                "created": u["created"],
            }
            for fid, u in self.uploads.items()
            if u.get("channel")
        ]
        found = [
            {k: v for k, v in f.items() if k != "content"}
            for f in [*self.files.values(), *shared]
            if (not args.get("channel") or args["channel"] in f["channels"])
            and (not args.get("user") or f["user"] == args["user"])
            and f["created"] >= since
        ]
        found.sort(key=lambda f: -f["created"])
        count = int(args.get("count") or 100)
        return {"ok": True, "files": found[:count], "paging": {"count": count, "total": len(found)}}

    def download(self, path: str, headers) -> tuple[int, dict, bytes]:  # noqa: ANN001 - http.server's
        """A private file URL: the bytes with a valid bot token; else, as Slack does, a redirect
        to a sign-in page (HTML, status 200), never the file."""
        if path.startswith("/signin"):
            return (
                200,
                {"Content-Type": "text/html; charset=utf-8"},
                b"<html>Sign in to Slack</html>",
            )
        fid = path.split("/")[2].split("-", 1)[-1]
        auth = headers.get("Authorization") or ""
        with self._lock:
            self.calls.append(("files-pri", {"file": fid, "authorized": bool(auth)}))
            if fid not in self.files or auth.removeprefix("Bearer ") not in self.tokens:
                return 302, {"Location": f"/signin?redir={path}"}, b""
            self.fetched.append(fid)
            return 200, {"Content-Type": "text/plain"}, self.files[fid]["content"]

    def shared_files(self, channel: str) -> list[dict]:
        """Files whose upload was completed into ``channel``."""
        return [f for f in self.uploads.values() if f.get("channel") == channel]


def modal_refused(fake: FakeSlack, args: dict) -> dict | None:
    """views.open as Slack checks it: a trigger_id used once, a modal with a title of at most 24
    characters, a callback_id, and (with input blocks) a submit button and labelled inputs."""
    trigger = str(args.get("trigger_id") or "")
    used = fake.__dict__.setdefault("used_triggers", set())
    if not trigger:
        return {"ok": False, "error": "invalid_trigger_id"}
    if trigger in used:
        return {"ok": False, "error": "exchanged_trigger_id"}
    used.add(trigger)
    view = args.get("view")
    view = json.loads(view) if isinstance(view, str) else view or {}
    problems = []
    title = (view.get("title") or {}).get("text", "")
    if view.get("type") != "modal":
        problems.append("view type must be modal")
    if not title or len(title) > 24:
        problems.append("title must be 1-24 characters")
    blocks = view.get("blocks") or []
    inputs = [b for b in blocks if b.get("type") == "input"]
    if inputs and not view.get("submit"):
        problems.append("a view with input blocks needs submit")
    for b in inputs:
        if not (b.get("label") or {}).get("text") or not b.get("element"):
            problems.append("input block needs label and element")
    if len(blocks) > 100 or len(view.get("private_metadata", "")) > 3000:
        problems.append("too many blocks or private_metadata too long")
    if problems:
        fake.rejected.append(("views.open", problems))
        return {"ok": False, "error": "invalid_arguments", "errors": problems}
    return None
