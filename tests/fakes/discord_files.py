"""Attachments in the Discord fake, as strict as Discord's Create Message with files:

multipart/form-data with ``payload_json`` and one ``files[n]`` part per file; every entry of the
payload's ``attachments`` must name an uploaded part by ``id`` (n), and every part must be named
by one (else 400 / 50035 Invalid Form Body); at most 10 files; each at most 25 MiB (else 413 /
40005 Request entity too large); a description (alt text) at most 1,024 characters; the bot
needs Attach Files in the channel (``no_attach``: 403 / 50013). Stricter than Discord in one
place: a part named .png must be a PNG (Discord would store it and show a broken image).
"""

from __future__ import annotations

import email
import json
import re

PNG = b"\x89PNG\r\n\x1a\n"
MAX_FILE, MAX_FILES, MAX_ALT = 25 * 1024 * 1024, 10, 1024


def multipart(raw: bytes, content_type: str) -> tuple[dict, dict[int, tuple[str, bytes]]]:
    """A multipart body's payload_json and its ``files[n]`` parts: n -> (file name, bytes)."""
    doc = email.message_from_bytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    payload, files = {}, {}
    for part in doc.walk():
        name = part.get_param("name", header="content-disposition")
        if name == "payload_json":
            payload = json.loads(part.get_payload(decode=True))
        elif name and (m := re.fullmatch(r"files\[(\d+)\]", name)):
            files[int(m.group(1))] = (part.get_filename() or "", part.get_payload(decode=True))
    return payload, files


def _form_error(message: str) -> tuple[int, dict, dict]:
    errors = {"attachments": {"_errors": [{"code": "BASE_TYPE_INVALID", "message": message}]}}
    return 400, {}, {"message": "Invalid Form Body", "code": 50035, "errors": errors}


def attachment_refused(
    fake, channel: str, body: dict, files: dict[int, tuple[str, bytes]]
) -> tuple[int, dict, dict] | None:  # noqa: ANN001 - a FakeDiscord
    """Discord's answer to a message whose files it would refuse; None when it would take them."""
    if not files and not body.get("attachments"):
        return None
    if channel in fake.no_attach:
        return 403, {}, {"message": "Missing Permissions", "code": 50013}
    if len(files) > MAX_FILES:
        return _form_error(f"at most {MAX_FILES} files")
    if any(len(data) > MAX_FILE for _, data in files.values()):
        return 413, {}, {"message": "Request entity too large", "code": 40005}
    named = [a.get("id") for a in body.get("attachments") or []]
    if sorted(str(n) for n in named) != sorted(str(n) for n in files):
        return _form_error(f"attachment ids {named} do not match the files {sorted(files)}")
    for a in body.get("attachments") or []:
        if len(a.get("description") or "") > MAX_ALT:
            return _form_error(f"description over {MAX_ALT} characters")
    for name, data in files.values():
        if name.lower().endswith(".png") and not data.startswith(PNG):
            return _form_error(f"{name} is not a PNG image")
    return None


def stored(body: dict, files: dict[int, tuple[str, bytes]], message_id: str) -> list[dict]:
    """The message's attachments as Discord answers them (the bytes kept under ``data``)."""
    out = []
    for a in body.get("attachments") or []:
        name, data = files[int(a["id"])]
        kind = "image/png" if data.startswith(PNG) else "application/octet-stream"
        out.append(
            {
                "id": f"{message_id}{a['id']}",
                "filename": a.get("filename") or name,
                "description": a.get("description"),
                "size": len(data),
                "content_type": kind,
                "url": f"https://cdn.example/{message_id}/{name}",
                "proxy_url": f"https://cdn.example/{message_id}/{name}",
                "data": data,
            }
        )
    return out
