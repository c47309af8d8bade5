"""A strict local Zotero Web API v3: a real HTTP server for pyzotero, refusing what api.zotero.org
refuses and recording what arrived.

It holds libraries (``users/N``, ``groups/N``) of items and collections under one version
counter each, and API keys with the libraries they may read and write. Refused: no or a wrong
key, or one without access (403); a write without write access (403); a malformed or stale
`If-Unmodified-Since-Version` (400 / 412); more than 50 objects in one write (413); an unknown
item type or a field the type does not have (400, per object, as Zotero does); `/deleted`
without `since` (400). Told to, it answers 429 with `Retry-After`, or adds a `Backoff` header.
"""

from __future__ import annotations

import json
import secrets
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.http import LocalServer

MAX_WRITE = 50
BASE_FIELDS = frozenset(
    {
        "itemType",
        "title",
        "creators",
        "abstractNote",
        "url",
        "accessDate",
        "date",
        "extra",
        "collections",
        "tags",
        "relations",
        "language",
        "rights",
        "shortTitle",
        "libraryCatalog",
        "callNumber",
        "archive",
        "archiveLocation",
        "key",
        "version",
        "dateAdded",
        "dateModified",
        "deleted",
    }
)
TYPE_FIELDS = {
    "journalArticle": BASE_FIELDS
    | {
        "publicationTitle",
        "volume",
        "issue",
        "pages",
        "series",
        "seriesTitle",
        "seriesText",
        "journalAbbreviation",
        "DOI",
        "ISSN",
    },
    "preprint": BASE_FIELDS
    | {
        "genre",
        "repository",
        "archiveID",
        "place",
        "series",
        "seriesNumber",
        "DOI",
        "citationKey",
        "number",
    },
    "conferencePaper": BASE_FIELDS
    | {
        "proceedingsTitle",
        "conferenceName",
        "place",
        "publisher",
        "volume",
        "pages",
        "series",
        "DOI",
        "ISBN",
    },
    "book": BASE_FIELDS | {"publisher", "place", "ISBN", "edition", "numPages"},
    "note": frozenset(
        {
            "itemType",
            "note",
            "parentItem",
            "tags",
            "relations",
            "collections",
            "key",
            "version",
            "deleted",
        }
    ),
    "attachment": BASE_FIELDS
    | {"linkMode", "parentItem", "contentType", "charset", "filename", "md5", "mtime"},
}
CREATOR_TYPES = frozenset({"author", "editor", "contributor", "seriesEditor", "translator"})


@dataclass
class Library:
    version: int = 0
    items: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> data (with version)
    collections: dict[str, dict[str, Any]] = field(default_factory=dict)
    deleted: dict[str, int] = field(default_factory=dict)  # item key -> version it went


@dataclass
class Arrived:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: str
    status: int = 0


def new_key() -> str:
    return "".join(secrets.choice("23456789ABCDEFGHIJKLMNPQRSTUVWXYZ") for _ in range(8))


class FakeZotero(LocalServer):
    """See the module docstring; ``url`` is what pyzotero's ``endpoint`` is set to."""

    def __init__(self) -> None:
        self.libraries: dict[str, Library] = {}
        self.keys: dict[str, tuple[set[str], bool]] = {}  # key -> (libraries, may write)
        self.arrived: list[Arrived] = []
        self.lock = threading.RLock()
        self._limited: list[float] = []  # 429s still to send (their Retry-After)
        self._unlimited = 0  # requests still answered before those 429s
        self.backoff: float | None = None  # a Backoff header on each answer while set
        self._races = 0  # writes still to be overtaken by a concurrent change (412 once)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                parts = urlsplit(self.path)
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size).decode("utf-8") if size else ""
                seen = Arrived(
                    self.command,
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                with server.lock:
                    status, payload, headers = server.answer(seen)
                    seen.status = status
                    server.arrived.append(seen)
                data = json.dumps(payload).encode() if payload is not None else b""
                self.send_response(status)
                headers.setdefault("Content-Type", "application/json")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        self._serve(Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- set-up by tests -----------------------------------------------------------------------

    def library(self, where: str) -> Library:
        return self.libraries.setdefault(where, Library())

    def grant(self, key: str, where: str, write: bool = True) -> None:
        self.library(where)
        libs, _ = self.keys.get(key, (set(), write))
        libs.add(where)
        self.keys[key] = (libs, write)

    def add_item(self, where: str, **data: Any) -> str:
        with self.lock:
            lib = self.library(where)
            lib.version += 1
            key = data.pop("key", None) or new_key()
            lib.items[key] = {"key": key, "version": lib.version, **data}
            return key

    def delete_item(self, where: str, key: str) -> None:
        with self.lock:
            lib = self.library(where)
            lib.version += 1
            del lib.items[key]
            lib.deleted[key] = lib.version

    def rate_limit(self, retry_after: float = 30, times: int = 1, after: int = 0) -> None:
        """Answer the next ``times`` requests (after ``after`` more) with 429 Retry-After."""
        self._limited += [retry_after] * times
        self._unlimited = after

    def race_next_write(self, times: int = 1) -> None:
        """Another client changes the library just before each of the next ``times`` writes."""
        self._races += times

    def writes(self) -> list[Arrived]:
        return [a for a in self.arrived if a.method != "GET"]

    # -- the API -------------------------------------------------------------------------------

    def answer(self, a: Arrived) -> tuple[int, Any, dict[str, str]]:
        headers: dict[str, str] = {}
        if self.backoff is not None:
            headers["Backoff"] = str(int(self.backoff))
        if self._limited and self._unlimited > 0:
            self._unlimited -= 1
        elif self._limited:
            return 429, None, {"Retry-After": str(int(self._limited.pop(0)))}
        key = a.headers.get("zotero-api-key") or a.query.get("key", [""])[0]
        auth = a.headers.get("authorization", "")
        if not key and auth.startswith("Bearer "):
            key = auth.removeprefix("Bearer ").strip()
        parts = a.path.strip("/").split("/")
        if len(parts) < 3 or parts[0] not in ("users", "groups"):
            return 404, {"error": "Not found"}, headers
        where, rest = f"{parts[0]}/{parts[1]}", parts[2:]
        grant = self.keys.get(key)
        if not key or grant is None or where not in grant[0]:
            return 403, "Forbidden", headers
        lib = self.libraries[where]
        headers["Last-Modified-Version"] = str(lib.version)
        if a.method == "GET":
            return self._read(a, lib, rest, headers)
        if not grant[1]:
            return 403, "Write access denied", headers
        if a.method == "POST" and rest in (["items"], ["collections"]):
            return self._write(a, lib, rest[0], headers)
        return 405, "Method not allowed", headers

    def _read(
        self, a: Arrived, lib: Library, rest: list[str], headers: dict[str, str]
    ) -> tuple[int, Any, dict[str, str]]:
        q = {k: v[-1] for k, v in a.query.items()}
        if rest == ["deleted"]:
            if "since" not in q:
                return 400, "'since' parameter must be provided", headers
            since = int(q["since"])
            return (
                200,
                {
                    "items": [k for k, v in lib.deleted.items() if v > since],
                    "collections": [],
                    "searches": [],
                    "tags": [],
                    "settings": [],
                },
                headers,
            )
        if rest[0] == "collections":
            found = [
                {"key": c["key"], "version": c["version"], "data": c}
                for c in lib.collections.values()
                if rest != ["collections", "top"] or not c.get("parentCollection")
            ]
            return 200, found, headers | {"Total-Results": str(len(found))}
        if rest[0] != "items":
            return 404, "Not found", headers
        if len(rest) == 2 and rest[1] != "top":
            one = lib.items.get(rest[1])
            if one is None:
                return 404, "Not found", headers
            return 200, {"key": one["key"], "version": one["version"], "data": one}, headers
        since_header = a.headers.get("if-modified-since-version")
        if since_header is not None:
            if not since_header.isdigit():
                return 400, "Invalid If-Modified-Since-Version", headers
            if lib.version <= int(since_header):
                return 304, None, headers
        items = list(lib.items.values())
        if rest == ["items", "top"]:
            items = [i for i in items if not i.get("parentItem")]
        if "since" in q:
            items = [i for i in items if i["version"] > int(q["since"])]
        if "itemKey" in q:
            keys = q["itemKey"].split(",")
            if len(keys) > MAX_WRITE:
                return 400, "Cannot specify more than 50 item keys", headers
            items = [i for i in items if i["key"] in keys]
        if "q" in q:
            needle = q["q"].lower()
            fields = (
                ("title", "url", "extra", "DOI", "archiveID")
                if q.get("qmode") == "everything"
                else ("title",)
            )
            items = [i for i in items if any(needle in str(i.get(f, "")).lower() for f in fields)]
        if q.get("format") == "versions":
            return 200, {i["key"]: i["version"] for i in items}, headers
        limit = int(q["limit"]) if q.get("limit", "").isdigit() else 25
        start = int(q.get("start", 0) or 0)
        page = items[start : start + min(limit, 100)]
        out = [{"key": i["key"], "version": i["version"], "data": i} for i in page]
        return 200, out, headers | {"Total-Results": str(len(items))}

    def _write(
        self, a: Arrived, lib: Library, kind: str, headers: dict[str, str]
    ) -> tuple[int, Any, dict[str, str]]:
        if self._races:
            self._races -= 1
            lib.version += 1
            headers["Last-Modified-Version"] = str(lib.version)
        guard = a.headers.get("if-unmodified-since-version")
        if guard is not None:
            if not guard.isdigit():
                return 400, "Invalid If-Unmodified-Since-Version", headers
            if int(guard) != lib.version:
                return (
                    412,
                    f"Library has been modified since specified version (expected {guard}, found {lib.version})",
                    headers,
                )
        try:
            objects = json.loads(a.body)
        except ValueError:
            return 400, "Invalid JSON", headers
        if not isinstance(objects, list):
            return 400, "Uploaded data must be a JSON array", headers
        if len(objects) > MAX_WRITE:
            return 413, f"Only {MAX_WRITE} objects can be saved in a single request", headers
        ok: dict[str, Any] = {}
        failed: dict[str, Any] = {}
        changed = False
        for n, obj in enumerate(objects):
            problem = self._invalid(obj, kind, lib)
            if problem:
                failed[str(n)] = {"key": obj.get("key", ""), "code": 400, "message": problem}
                continue
            if not changed:
                lib.version += 1
                changed = True
            key = new_key()
            data = {**obj, "key": key, "version": lib.version}
            (lib.items if kind == "items" else lib.collections)[key] = data
            ok[str(n)] = {"key": key, "version": lib.version, "data": data}
        headers["Last-Modified-Version"] = str(lib.version)
        body = {
            "successful": ok,
            "success": {k: v["key"] for k, v in ok.items()},
            "unchanged": {},
            "failed": failed,
        }
        return 200, body, headers

    @staticmethod
    def _invalid(obj: Any, kind: str, lib: Library) -> str | None:
        if not isinstance(obj, dict):
            return "Object must be a JSON object"
        if kind == "collections":
            if not str(obj.get("name", "")).strip():
                return "Collection name cannot be empty"
            unknown = set(obj) - {"name", "parentCollection", "relations", "key", "version"}
            return f"Invalid property '{sorted(unknown)[0]}'" if unknown else None
        item_type = obj.get("itemType")
        if item_type not in TYPE_FIELDS:
            return f"'{item_type}' is not a valid itemType"
        unknown = set(obj) - TYPE_FIELDS[item_type]
        if unknown:
            return f"'{sorted(unknown)[0]}' is not a valid field for type '{item_type}'"
        for c in obj.get("creators", []):
            if c.get("creatorType") not in CREATOR_TYPES:
                return f"'{c.get('creatorType')}' is not a valid creator type"
            if not (c.get("name") or c.get("lastName")):
                return "Creator must have a name"
        for coll in obj.get("collections", []):
            if coll not in lib.collections:
                return f"Collection {coll} not found"
        return None
