"""The interaction side of the Discord fake: acknowledgements, follow-ups, edits, autocomplete
answers and command sync, as strict as Discord about order and payloads (mixed into FakeDiscord)."""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import UTC, datetime, timedelta

from discord.utils import snowflake_time, time_snowflake

from bot.adapters.discord.command_rules import command_problems
from bot.adapters.discord.limits import error_body, message_problems

#: Every interaction "Discord" has sent: id -> type (2 command, 3 component, 4 autocomplete).
ISSUED: dict[str, int] = {}
COMMAND, COMPONENT, AUTOCOMPLETE = 2, 3, 4
DEADLINE = 3.0  # seconds Discord waits for the initial response
UNKNOWN_INTERACTION = (404, {}, {"message": "Unknown interaction", "code": 10062})
TOKEN_LIFE = timedelta(minutes=15)  # follow-ups and edits work this long after the interaction
EXPIRED_TOKEN = (401, {}, {"message": "Invalid Webhook Token", "code": 50027})
#: Response types each interaction type takes (7 UPDATE_MESSAGE and 6 only for components).
MODAL_SUBMIT = 5
VALID = {COMMAND: {4, 5, 9}, COMPONENT: {4, 5, 6, 7, 9}, AUTOCOMPLETE: {8}, MODAL_SUBMIT: {4, 5, 6}}


EPHEMERAL = 64  # message flag


def issue(kind: int) -> str:
    """A new interaction's id: a snowflake from the clock, remembered with its type."""
    last = max((int(i) for i in ISSUED), default=0)
    iid = str(max(time_snowflake(datetime.now(UTC)), last + 1))
    ISSUED[iid] = kind
    return iid


def _wrong_type(kind: int, response: object) -> tuple[int, dict, dict]:
    problem = {
        "code": "INTERACTION_RESPONSE_TYPE_INVALID",
        "message": f"response type {response} is not valid for interaction type {kind}",
    }
    return (
        400,
        {},
        {"message": "Invalid Form Body", "code": 50035, "errors": {"type": {"_errors": [problem]}}},
    )


def _attachment(upload: dict) -> dict:
    """A message's attachment as Discord answers it, plus the uploaded ``text`` (what arrived)."""
    name = upload["filename"]
    url = f"https://cdn.discordapp.com/attachments/1/2/{name}"
    return {
        "id": str(abs(hash(name)) % 10**18),
        "filename": name,
        "size": len(upload["text"]),
        "url": url,
        "proxy_url": url,
        "text": upload["text"],
    }


class InteractionEndpoints:
    """Needs ``_next()`` and ``rejected`` from the fake it is mixed into.

    The initial response must come within 3 s of the interaction (its id's time) and suit its
    type, else 404 / 10062 Unknown interaction, or 400; ``late`` records refused latecomers.
    Follow-ups and edits need the interaction's token, which expires 15 minutes after the
    interaction: then 401 / 50027 Invalid Webhook Token (``expired`` records them). Time is the
    fake's clock, which ``advance()`` moves on.
    """

    def _init_interactions(self) -> None:
        self.acks: dict[str, list[dict]] = defaultdict(list)  # token -> callback bodies
        self.followups: dict[str, list[dict]] = defaultdict(list)  # token -> messages sent
        self.edits: dict[str, list[dict]] = defaultdict(list)  # token -> edit bodies accepted
        self.originals: dict[str, dict] = {}  # token -> the message a pressed button sits on
        self.fail_followups: dict[str, list[tuple[int, dict, dict]]] = defaultdict(list)
        self.synced: dict[str | None, list[dict]] = {}  # guild id (None: global) -> commands
        self.late: list[tuple[str, float]] = []  # (token, seconds) of responses past the deadline
        self.issued_at: dict[str, datetime] = {}  # token -> when its interaction was created
        self.expired: list[str] = []  # tokens used for a follow-up or edit after 15 minutes
        self.clock_offset = timedelta(0)
        # token -> flags of a deferred answer's "thinking…" message: as in Discord, the first
        # follow-up replaces it and keeps its visibility, whatever flags the follow-up asks for
        self.loading: dict[str, int] = {}
        self.deleted: list[str] = []  # tokens whose original response was deleted

    def now(self) -> datetime:
        """The fake's clock: the real one, moved on by ``advance()``."""
        return datetime.now(UTC) + self.clock_offset

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass for Discord (deadlines and token lifetimes)."""
        self.clock_offset += timedelta(seconds=seconds)

    def _token_expired(self, token: str) -> bool:
        issued = self.issued_at.get(token)
        if issued is None or self.now() - issued <= TOKEN_LIFE:
            return False
        self.expired.append(token)
        return True

    def _reply_message(self, body: dict, channel: str = "111") -> dict:
        from tests.fakes.discord import BOT  # the fake that mixes this in defines the bot user

        return {
            "id": self._next(),
            "channel_id": channel,
            "author": BOT,
            "content": body.get("content") or "",
            "timestamp": "2026-12-01T09:00:00+00:00",
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [_attachment(f) for f in body.get("_files", [])],
            "embeds": body.get("embeds", []),
            "components": body.get("components", []),
            "pinned": False,
            "type": 0,
            "flags": body.get("flags", 0),
        }

    def _invalid(self, token: str, problems: list[str]) -> tuple[int, dict, dict]:
        self.rejected.append((f"interaction {token}", problems))
        return 400, {}, error_body(problems)

    def _interaction(self, method: str, path: str, body: dict) -> tuple[int, dict, dict] | None:
        """Discord's interaction endpoints, as strict as Discord about order and payloads."""
        if m := re.fullmatch(r"/interactions/(\d+)/([^/]+)/callback", path):
            return self._callback(m.group(1), m.group(2), body)
        if m := re.fullmatch(r"/webhooks/\d+/([^/]+)", path):
            return self._followup(m.group(1), body) if method == "POST" else None
        if m := re.fullmatch(r"/webhooks/\d+/([^/]+)/messages/(@original|\d+)", path):
            if method == "DELETE" and m.group(2) == "@original":
                return self._delete_original(m.group(1))
            return self._edit(m.group(1), m.group(2), body) if method == "PATCH" else None
        return None

    def _callback(self, iid: str, token: str, body: dict) -> tuple[int, dict, dict]:
        if self.acks[token]:
            return 400, {}, {"message": "Interaction has already been acknowledged.", "code": 40060}
        kind = ISSUED.get(iid)
        if kind is None:
            return UNKNOWN_INTERACTION
        self.issued_at.setdefault(token, snowflake_time(int(iid)))
        age = (self.now() - snowflake_time(int(iid))).total_seconds()
        if age > DEADLINE:
            self.late.append((token, age))
            return UNKNOWN_INTERACTION
        if body.get("type") not in VALID[kind]:
            return _wrong_type(kind, body.get("type"))
        data = body.get("data") or {}
        original = self.originals.get(token, {})
        shown = {**original, **data} if body.get("type") == 7 else data  # 7 edits the message
        if body.get("type") in (4, 7) and (problems := message_problems(shown)):
            return self._invalid(token, problems)
        if body.get("type") == 8 and (problems := choice_problems(data.get("choices") or [])):
            return self._invalid(token, problems)
        if body.get("type") == 9 and (problems := modal_problems(data)):
            return self._invalid(token, problems)
        self.acks[token].append(body)
        if body.get("type") == 5:
            self.loading[token] = int(data.get("flags") or 0) & EPHEMERAL
        if body.get("type") == 7 and token in self.originals:
            self.originals[token].update(
                {k: v for k, v in data.items() if k in ("embeds", "components", "content")}
            )
        return (
            200,
            {},
            {
                "interaction": {
                    "id": iid,
                    "type": kind,
                    "activity_instance_id": None,
                    "response_message_id": None,
                    "response_message_loading": body.get("type") == 5,
                    "response_message_ephemeral": bool((data.get("flags") or 0) & 64),
                }
            },
        )

    def _followup(self, token: str, body: dict) -> tuple[int, dict, dict]:
        if not self.acks[token]:  # Discord: no follow-up before the interaction is acknowledged
            return 404, {}, {"message": "Unknown Webhook", "code": 10015}
        if self._token_expired(token):
            return EXPIRED_TOKEN
        if self.fail_followups.get(token):
            return self.fail_followups[token].pop(0)
        if problems := message_problems(body):
            return self._invalid(token, problems)
        if token in self.loading:  # the deferral decided: this message takes its place
            body = {
                **body,
                "flags": (int(body.get("flags") or 0) & ~EPHEMERAL) | self.loading.pop(token),
            }
        msg = self._reply_message(body)
        self.followups[token].append(msg)
        return 200, {}, msg

    def _delete_original(self, token: str) -> tuple[int, dict, dict]:
        """The deferred "thinking…" message (or what replaced it) goes; later follow-ups are new
        messages with their own flags."""
        if not self.acks[token]:
            return 404, {}, {"message": "Unknown Webhook", "code": 10015}
        if self._token_expired(token):
            return EXPIRED_TOKEN
        if token in self.loading:
            del self.loading[token]
        elif self.followups[token]:  # the first follow-up took the original's place
            self.followups[token].pop(0)
        else:
            return 404, {}, {"message": "Unknown Message", "code": 10008}
        self.deleted.append(token)
        return 204, {}, {}

    def _edit(self, token: str, which: str, body: dict) -> tuple[int, dict, dict]:
        if not self.acks[token]:
            return 404, {}, {"message": "Unknown Webhook", "code": 10015}
        if self._token_expired(token):
            return EXPIRED_TOKEN
        if which == "@original":
            target = self.originals.get(token) or (self.followups[token] or [None])[0]
        else:
            target = next((x for x in self.followups[token] if x["id"] == which), None)
        if target is None:
            return 404, {}, {"message": "Unknown Message", "code": 10008}
        merged = {
            **target,
            **{k: v for k, v in body.items() if k in ("embeds", "components", "content")},
        }
        if problems := message_problems(merged):
            return self._invalid(token, problems)
        target.update(merged)
        self.edits[token].append(body)
        return 200, {}, target

    def _commands(self, method: str, path: str, body: list) -> tuple[int, dict, list | dict] | None:
        """Bulk overwrite of commands: refused like Discord when the JSON breaks its rules."""
        m = re.fullmatch(r"/applications/\d+(?:/guilds/(\d+))?/commands", path)
        if m is None or method != "PUT":
            return None
        if problems := command_problems(body):
            return (
                400,
                {},
                {"message": "Invalid Form Body", "code": 50035, "errors": {"_problems": problems}},
            )
        self.synced[m.group(1)] = body
        return (
            200,
            {},
            [
                {
                    "id": self._next(),
                    "application_id": "2000",
                    "name": c.get("name"),
                    "type": 1,
                    "description": c.get("description", ""),
                    "version": "1",
                }
                for c in body
            ],
        )


def choice_problems(choices: list[dict]) -> list[str]:
    """Discord's rules for an autocomplete answer: at most 25 choices, names and values 1-100."""
    out = ["over 25 choices"] if len(choices) > 25 else []
    for c in choices:
        if not 1 <= len(str(c.get("name", ""))) <= 100 or len(str(c.get("value", ""))) > 100:
            out.append(f"choice {str(c.get('name'))[:30]!r}: name or value length")
    return out


def modal_problems(data: dict) -> list[str]:
    """A MODAL response as Discord checks it: a custom_id, a title of 1-45 characters, and 1-5
    action rows each holding one text input (custom_id, a label of 1-45 characters, style 1|2)."""
    problems = []
    if not 1 <= len(data.get("custom_id") or "") <= 100:
        problems.append("modal custom_id must be 1-100 characters")
    if not 1 <= len(data.get("title") or "") <= 45:
        problems.append("modal title must be 1-45 characters")
    rows = data.get("components") or []
    if not 1 <= len(rows) <= 5:
        problems.append("a modal needs 1-5 rows")
    for row in rows:
        inputs = row.get("components") or []
        if row.get("type") != 1 or len(inputs) != 1 or inputs[0].get("type") != 4:
            problems.append("each modal row holds one text input")
            continue
        t = inputs[0]
        if not t.get("custom_id") or not 1 <= len(t.get("label") or "") <= 45:
            problems.append("a text input needs a custom_id and a 1-45 character label")
        if t.get("style") not in (1, 2):
            problems.append("text input style must be 1 or 2")
    return problems
