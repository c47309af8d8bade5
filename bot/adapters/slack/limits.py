"""Slack's documented Block Kit and chat.postMessage limits: what Slack would refuse, and why.

One validator serves the poster (never send what Slack rejects), the renderer tests and the
local fake Slack (which answers ``invalid_blocks`` / ``msg_too_long`` exactly when this does).
Sources: api.slack.com reference for blocks, block elements, composition objects, chat.postMessage.
"""

from __future__ import annotations

MAX_MESSAGE_BLOCKS = 50
MAX_VIEW_BLOCKS = 100  # home tabs and modals
MAX_TEXT = 40_000  # chat.postMessage `text`; longer is msg_too_long
MAX_TEXT_OBJECT = 3000
MAX_HEADER = 150
MAX_SECTION_FIELDS = 10
MAX_FIELD = 2000
MAX_BUTTON_TEXT = 75
MAX_ACTION_ID = 255
MAX_BLOCK_ID = 255
MAX_URL = 3000
MAX_VALUE = 2000
MAX_ACTIONS_ELEMENTS = 25
MAX_CONTEXT_ELEMENTS = 10
MAX_ALT_TEXT = 2000
TEXT_TYPES = ("plain_text", "mrkdwn")


def _text_object(
    obj: object, where: str, limit: int = MAX_TEXT_OBJECT, plain: bool = False
) -> list[str]:
    """A composition text object: right type, 1..limit characters."""
    if not isinstance(obj, dict) or obj.get("type") not in TEXT_TYPES:
        return [f"{where}: not a text object"]
    if plain and obj["type"] != "plain_text":
        return [f"{where}: must be plain_text"]
    text = obj.get("text")
    if not isinstance(text, str) or not text:
        return [f"{where}: empty text"]
    return [f"{where}: text over {limit} chars"] if len(text) > limit else []


def _button(el: dict, where: str) -> list[str]:
    out = _text_object(el.get("text"), f"{where} text", MAX_BUTTON_TEXT, plain=True)
    if "url" in el and not (0 < len(str(el["url"])) <= MAX_URL):
        out.append(f"{where}: url over {MAX_URL} chars")
    if len(str(el.get("value", ""))) > MAX_VALUE:
        out.append(f"{where}: value over {MAX_VALUE} chars")
    if el.get("style") not in (None, "primary", "danger"):
        out.append(f"{where}: bad style")
    return out


def _element(el: object, where: str) -> list[str]:
    """An interactive or context element."""
    if not isinstance(el, dict):
        return [f"{where}: not an object"]
    out = []
    aid = el.get("action_id")
    if aid is not None and not (0 < len(str(aid)) <= MAX_ACTION_ID):
        out.append(f"{where}: action_id over {MAX_ACTION_ID} chars")
    kind = el.get("type")
    if kind == "button":
        out += _button(el, where)
    elif kind in TEXT_TYPES:
        out += _text_object(el, where)
    elif kind == "image":
        if not (0 < len(str(el.get("image_url", ""))) <= MAX_URL):
            out.append(f"{where}: image_url missing or over {MAX_URL} chars")
        if not (0 < len(str(el.get("alt_text", ""))) <= MAX_ALT_TEXT):
            out.append(f"{where}: alt_text missing or over {MAX_ALT_TEXT} chars")
    return out


def _unique_action_ids(elements: list, where: str) -> list[str]:
    ids = [e.get("action_id") for e in elements if isinstance(e, dict) and e.get("action_id")]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    return [f"{where}: duplicate action_id {d[:40]!r}" for d in dupes]


def _section(block: dict, where: str) -> list[str]:
    out = []
    if "text" not in block and "fields" not in block:
        out.append(f"{where}: section needs text or fields")
    if "text" in block:
        out += _text_object(block["text"], f"{where} text")
    fields = block.get("fields", [])
    if len(fields) > MAX_SECTION_FIELDS:
        out.append(f"{where}: over {MAX_SECTION_FIELDS} fields")
    for n, f in enumerate(fields):
        out += _text_object(f, f"{where} field {n}", MAX_FIELD)
    if "accessory" in block:
        out += _element(block["accessory"], f"{where} accessory")
    return out


def _elements(block: dict, where: str, limit: int) -> list[str]:
    els = block.get("elements")
    if not isinstance(els, list) or not els:
        return [f"{where}: no elements"]
    out = [f"{where}: over {limit} elements"] if len(els) > limit else []
    for n, el in enumerate(els):
        out += _element(el, f"{where} element {n}")
    return out + _unique_action_ids(els, where)


def block_problems(block: object, n: int) -> list[str]:
    """Every rule one block breaks."""
    where = f"block {n}"
    if not isinstance(block, dict):
        return [f"{where}: not an object"]
    out = []
    if "block_id" in block and not (0 < len(str(block["block_id"])) <= MAX_BLOCK_ID):
        out.append(f"{where}: block_id over {MAX_BLOCK_ID} chars")
    kind = block.get("type")
    if kind == "section":
        out += _section(block, where)
    elif kind == "header":
        out += _text_object(block.get("text"), f"{where} header", MAX_HEADER, plain=True)
    elif kind == "actions":
        out += _elements(block, where, MAX_ACTIONS_ELEMENTS)
    elif kind == "context":
        out += _elements(block, where, MAX_CONTEXT_ELEMENTS)
    elif kind == "image":
        out += _element(block, where)
    elif kind != "divider":
        out.append(f"{where}: unsupported block type {str(kind)[:20]!r}")
    return out


def _blocks_problems(blocks: object, limit: int) -> list[str]:
    if not isinstance(blocks, list):
        return ["blocks: not a list"]
    out = [f"over {limit} blocks ({len(blocks)})"] if len(blocks) > limit else []
    for n, b in enumerate(blocks):
        out += block_problems(b, n)
    ids = [b.get("block_id") for b in blocks if isinstance(b, dict) and b.get("block_id")]
    out += [f"duplicate block_id {d[:40]!r}" for d in sorted({i for i in ids if ids.count(i) > 1})]
    return out


def message_problems(blocks: list[dict], text: str) -> list[str]:
    """Every rule a chat.postMessage/chat.update payload breaks; [] when Slack would accept it."""
    out = []
    if not blocks and not (text or "").strip():
        out.append("no text and no blocks")
    if len(text or "") > MAX_TEXT:
        out.append(f"text over {MAX_TEXT} chars (msg_too_long)")
    return out + (_blocks_problems(blocks, MAX_MESSAGE_BLOCKS) if blocks else [])


def view_problems(view: dict) -> list[str]:
    """Every rule a views.publish / views.open view breaks (home tab or modal)."""
    out = []
    kind = view.get("type")
    if kind not in ("home", "modal"):
        out.append(f"view type {str(kind)[:20]!r} unsupported")
    if kind == "modal":
        out += _text_object(view.get("title"), "modal title", 24, plain=True)
    for key in ("private_metadata", "callback_id", "external_id"):
        limit = 3000 if key == "private_metadata" else 255
        if len(str(view.get(key, ""))) > limit:
            out.append(f"{key} over {limit} chars")
    return out + _blocks_problems(view.get("blocks", []), MAX_VIEW_BLOCKS)


def error_code(problems: list[str]) -> str:
    """The error Slack answers for these problems (text too long is its own error)."""
    return "msg_too_long" if any("msg_too_long" in p for p in problems) else "invalid_blocks"
