"""Discord's documented message limits on the JSON body it receives: what it would refuse, and why.

One validator serves the poster (never send what Discord rejects), the renderer tests and the
local fake Discord (which answers 400 / code 50035 exactly when this finds a problem).
Sources: discord.com/developers/docs resources/message (create message), embed limits, components.
"""

from __future__ import annotations

MAX_CONTENT = 2000
MAX_EMBEDS = 10
MAX_TITLE = 256
MAX_DESCRIPTION = 4096
MAX_FIELDS = 25
MAX_FIELD_NAME = 256
MAX_FIELD_VALUE = 1024
MAX_FOOTER = 2048
MAX_AUTHOR = 256
MAX_TOTAL = 6000  # title + description + field names/values + footer + author, all embeds
MAX_ROWS = 5
MAX_BUTTONS = 5
MAX_CUSTOM_ID = 100
MAX_LABEL = 80
MAX_LINK_URL = 512
MAX_NONCE = 25
LINK_STYLE = 5
MAX_ALLOWED_USERS = 100  # allowed_mentions.users (and .roles): at most 100 ids each
MENTION_TYPES = ("roles", "users", "everyone")


def _len(value: object) -> int:
    return len(value) if isinstance(value, str) else 0


def _embed(e: dict, n: int) -> tuple[list[str], int]:
    """Problems of one embed, and its share of the 6,000-character total."""
    where, out = f"embed {n}", []
    fields = e.get("fields") or []
    footer = (e.get("footer") or {}).get("text")
    author = (e.get("author") or {}).get("name")
    for key, value, limit in (
        ("title", e.get("title"), MAX_TITLE),
        ("description", e.get("description"), MAX_DESCRIPTION),
        ("footer", footer, MAX_FOOTER),
        ("author", author, MAX_AUTHOR),
    ):
        if _len(value) > limit:
            out.append(f"{where}: {key} over {limit} chars")
    if len(fields) > MAX_FIELDS:
        out.append(f"{where}: over {MAX_FIELDS} fields")
    for k, f in enumerate(fields):
        if not (0 < _len(f.get("name")) <= MAX_FIELD_NAME):
            out.append(f"{where} field {k}: name empty or over {MAX_FIELD_NAME} chars")
        if not (0 < _len(f.get("value")) <= MAX_FIELD_VALUE):
            out.append(f"{where} field {k}: value empty or over {MAX_FIELD_VALUE} chars")
    size = sum(_len(x) for x in (e.get("title"), e.get("description"), footer, author))
    size += sum(_len(f.get("name")) + _len(f.get("value")) for f in fields)
    return out, size


def _button(b: dict, where: str) -> list[str]:
    out = []
    if _len(b.get("label")) > MAX_LABEL:
        out.append(f"{where}: label over {MAX_LABEL} chars")
    if b.get("style") == LINK_STYLE:
        if not (0 < _len(b.get("url")) <= MAX_LINK_URL):
            out.append(f"{where}: link url missing or over {MAX_LINK_URL} chars")
        if "custom_id" in b:
            out.append(f"{where}: a link button cannot have a custom_id")
    elif not (0 < _len(b.get("custom_id")) <= MAX_CUSTOM_ID):
        out.append(f"{where}: custom_id missing or over {MAX_CUSTOM_ID} chars")
    return out


def _components(rows: list) -> list[str]:
    out = [f"over {MAX_ROWS} action rows"] if len(rows) > MAX_ROWS else []
    ids: list[str] = []
    for r, row in enumerate(rows):
        items = row.get("components") or [] if isinstance(row, dict) else []
        if not items or len(items) > MAX_BUTTONS:
            out.append(f"row {r}: needs 1..{MAX_BUTTONS} buttons")
        for k, b in enumerate(items):
            out += _button(b, f"row {r} button {k}")
            if b.get("custom_id"):
                ids.append(b["custom_id"])
    out += [f"duplicate custom_id {d[:40]!r}" for d in sorted({i for i in ids if ids.count(i) > 1})]
    return out


def message_problems(payload: dict) -> list[str]:
    """Every rule a create-message body breaks; [] when Discord would accept it."""
    out = []
    embeds = payload.get("embeds") or []
    if _len(payload.get("content")) > MAX_CONTENT:
        out.append(f"content over {MAX_CONTENT} chars")
    if not payload.get("content") and not embeds and not payload.get("attachments"):
        out.append("empty message")
    if len(embeds) > MAX_EMBEDS:
        out.append(f"over {MAX_EMBEDS} embeds")
    total = 0
    for n, e in enumerate(embeds):
        problems, size = _embed(e, n)
        out += problems
        total += size
    if total > MAX_TOTAL:
        out.append(f"embeds total {total} chars, over {MAX_TOTAL}")
    out += _components(payload.get("components") or [])
    nonce = payload.get("nonce")
    if isinstance(nonce, str) and len(nonce) > MAX_NONCE:
        out.append(f"nonce over {MAX_NONCE} chars")
    if (mentions := payload.get("allowed_mentions")) is not None:
        out += _allowed_mentions(mentions)
    return out


def _allowed_mentions(am: object) -> list[str]:
    """What Discord refuses in ``allowed_mentions``: an unknown parse type, over 100 users or
    roles, ids that are no snowflakes, or a type both parsed and listed ('users' in parse
    beside a users list)."""
    if not isinstance(am, dict):
        return ["allowed_mentions: not an object"]
    out = []
    parse = am.get("parse") or []
    if not isinstance(parse, list) or any(p not in MENTION_TYPES for p in parse):
        out.append(f"allowed_mentions.parse: unknown type in {str(parse)[:60]}")
    for key in ("users", "roles"):
        ids = am.get(key)
        if ids is None:
            continue
        if not isinstance(ids, list) or len(ids) > MAX_ALLOWED_USERS:
            out.append(f"allowed_mentions.{key}: over {MAX_ALLOWED_USERS} ids")
            continue
        if any(not str(i).isdigit() for i in ids):
            out.append(f"allowed_mentions.{key}: an id that is no snowflake")
        if isinstance(parse, list) and key in parse:
            out.append(f"allowed_mentions: {key} both parsed and listed (mutually exclusive)")
    return out


def error_body(problems: list[str]) -> dict:
    """Discord's answer to an invalid body: 400, code 50035 'Invalid Form Body'."""
    return {"message": "Invalid Form Body", "code": 50035, "errors": {"_problems": problems}}
