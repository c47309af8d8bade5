"""File uploads in the Slack fake, as strict as Slack's three-step flow (files:write needed):

1. ``files.getUploadURLExternal`` (filename, length >= 1, optional ``alt_txt`` up to 1,000
   characters) answers a file id and an upload URL;
2. the file's bytes are POSTed to that URL (``upload-F…`` in ``calls``): an unknown or already
   completed id gets 404;
3. ``files.completeUploadExternal`` (``files``: [{id, title}], ``channel_id``,
   ``initial_comment``) shares it: an unknown id is ``file_not_found``, one never uploaded
   ``file_upload_not_completed``, one completed before ``file_not_found`` (ids are single use);
   bytes that differ from the declared length, or a file named .png (or given alt text, which
   only images take) that is not a PNG, are refused; the channel follows chat.postMessage's
   membership rules.

Slack does not document error codes for the last two; the fake names them
``file_size_mismatch`` and ``invalid_file_type``. ``uploads`` records everything that arrived,
and where each file was shared (``channel``, once completed). ``files.info`` on an uploaded id
says where it is shared (``channels``/``groups`` and ``shares``), nowhere before step 3.
"""

from __future__ import annotations

import json
import time
from contextlib import suppress
from pathlib import Path

import yaml

PNG = b"\x89PNG\r\n\x1a\n"
MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "slack" / "manifest.yml"
MAX_ALT = 1000


def manifest_scopes() -> set[str]:
    """The bot scopes the app manifest asks for: what an installed token has."""
    doc = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    return set(doc["oauth_config"]["scopes"]["bot"])


def _files(args: dict) -> list[dict]:
    files = args.get("files")
    files = json.loads(files) if isinstance(files, str) else files or []
    return files if isinstance(files, list) else []


def upload_refused(fake, method: str, args: dict) -> dict | None:  # noqa: ANN001 - a FakeSlack
    """Slack's answer to a files.* call (or an upload) it would refuse; None when it would take it."""
    if method.startswith("upload-"):  # the upload URL: answered 404 (see FakeSlack's handler)
        up = fake.uploads.get(method.removeprefix("upload-"))
        return {"ok": False, "error": "not_found"} if up is None or "channel" in up else None
    if "files:write" not in fake.scopes:
        return {
            "ok": False,
            "error": "missing_scope",
            "needed": "files:write",
            "provided": ",".join(sorted(fake.scopes)),
        }
    if method == "files.getUploadURLExternal":
        length = str(args.get("length", ""))
        if not args.get("filename") or not length.isdigit() or int(length) < 1:
            return {"ok": False, "error": "invalid_arguments"}
        if len(args.get("alt_txt") or "") > MAX_ALT:
            return {"ok": False, "error": "invalid_arguments"}
        return None
    if method != "files.completeUploadExternal":
        return None
    files = _files(args)
    if not files or any(f.get("id") not in fake.uploads for f in files):
        return {"ok": False, "error": "file_not_found"}
    for f in files:
        up = fake.uploads[f["id"]]
        if "channel" in up:  # completed before: an upload id is used once
            return {"ok": False, "error": "file_not_found"}
        if "bytes" not in up:
            return {"ok": False, "error": "file_upload_not_completed"}
        if len(up["bytes"]) != up["length"]:
            return {"ok": False, "error": "file_size_mismatch"}
        image = str(up["name"]).lower().endswith(".png") or up.get("alt_txt")
        if image and not up["bytes"].startswith(PNG):
            return {"ok": False, "error": "invalid_file_type"}
    # sharing into a channel needs the bot there, as chat.postMessage does
    if (channel := args.get("channel_id")) and (refused := fake.membership_refused(channel)):
        return refused
    return None


def upload_ok(fake, method: str, args: dict) -> dict:  # noqa: ANN001 - a FakeSlack
    """Step 1 (an id and a URL) or step 2 (the bytes arrive at the URL)."""
    if method == "files.getUploadURLExternal":
        file_id = f"F{len(fake.uploads) + 1}"
        fake.uploads[file_id] = {
            "name": args.get("filename"),
            "length": int(args["length"]),
            "alt_txt": args.get("alt_txt"),
            "created": int(time.time() + fake.clock_skew),  # Slack's clock, as message ts
        }
        return {"ok": True, "file_id": file_id, "upload_url": f"{fake.url}upload/{file_id}"}
    up = fake.uploads[method.removeprefix("upload-")]
    up["bytes"] = args["bytes"]
    with suppress(UnicodeDecodeError):  # a text file (an export) is kept as text too
        up["content"] = args["bytes"].decode()
    return {"ok": True}


def complete_ok(fake, args: dict) -> dict:  # noqa: ANN001 - a FakeSlack
    """Step 3: the files are shared into the channel with their title and comment."""
    files = _files(args)
    for f in files:
        fake.uploads[f["id"]].update(
            channel=args.get("channel_id"),
            title=f.get("title"),
            comment=args.get("initial_comment"),
        )
    return {"ok": True, "files": [{"id": f["id"], "title": f.get("title")} for f in files]}


def upload_info(fake, file_id: str) -> dict:  # noqa: ANN001 - a FakeSlack
    """files.info for an uploaded file: shared in the channel step 3 named, else nowhere."""
    up = fake.uploads[file_id]
    channel = up.get("channel")
    private = channel in fake.private
    kind = "private" if private else "public"
    shares = {kind: {channel: [{"ts": "1.0"}]}} if channel else {}
    return {
        "ok": True,
        "file": {
            "id": file_id,
            "name": up["name"],
            "title": up.get("title") or up["name"],
            "channels": [channel] if channel and not private else [],
            "groups": [channel] if channel and private else [],
            "ims": [],
            "shares": shares,
        },
    }
