"""The Zotero Web API v3 through pyzotero: reads for sync, writes for save.

pyzotero's own rate-limit handling sleeps (and starts a timer thread); here a 429's
`Retry-After` and a `Backoff` header become a RateLimited the caller records, so nothing waits
inside a command or the scheduler's sweep and the next attempt keeps Zotero's word.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
from pyzotero import zotero, zotero_errors

from digest.errors import DigestError

#: Zotero's limit on objects per write and on keys per `itemKey=` read.
BATCH = 50
LIBRARY_ID = re.compile(r"\d{1,12}")
API_KEY = re.compile(r"[A-Za-z0-9]{24}")


class RateLimited(Exception):
    """Zotero asked to wait ``seconds`` (429 Retry-After, or a Backoff header)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"wait {seconds:.0f} s")
        self.seconds = seconds


class NotModified(Exception):
    """304: nothing changed since the version asked about."""


class ZoteroRefused(DigestError):
    """Zotero said no (a wrong key or id, a bad write): the message is the user's one line."""


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


class _Zotero(zotero.Zotero):
    """pyzotero pointed at ``endpoint``, with extra request headers and no sleeping."""

    def __init__(self, endpoint: str, library_type: str, library_id: str, key: str) -> None:
        self.extra_headers: dict[str, str] = {}  # before pyzotero builds its client with them
        super().__init__(library_id, library_type, key)
        self.endpoint = endpoint.rstrip("/")
        self.wait: float | None = None  # a Backoff heard: the next request is not sent
        self.client.event_hooks["response"] = [self._heard]

    def default_headers(self) -> dict[str, str]:
        return {**super().default_headers(), **getattr(self, "extra_headers", {})}

    def _heard(self, response: httpx.Response) -> None:
        if response.status_code == 429:
            wait = _seconds(response.headers.get("retry-after"))
            raise RateLimited(wait if wait is not None else 60.0)
        if response.status_code == 304:
            raise NotModified()
        if (wait := _seconds(response.headers.get("backoff"))) is not None:
            self.wait = max(self.wait or 0.0, wait)

    def _set_backoff(self, duration: Any) -> None:  # pyzotero's: a timer thread and a sleep
        self.wait = max(self.wait or 0.0, _seconds(str(duration)) or 0.0)

    def _check_backoff(self) -> None:
        if self.wait:
            raise RateLimited(self.wait)


class ZoteroLibrary:
    """One library (``users/123`` or ``groups/456``) reached with one API key."""

    def __init__(self, endpoint: str, library_type: str, library_id: str, key: str) -> None:
        self.where = f"{library_type}s/{library_id}"
        self._z = _Zotero(endpoint, library_type, library_id, key)

    @property
    def backoff(self) -> float | None:
        """Seconds Zotero asked us to stay away after the last answer (Backoff), if it did."""
        return self._z.wait

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (RateLimited, NotModified):
            raise
        except zotero_errors.UserNotAuthorisedError:
            raise ZoteroRefused(
                f"Zotero refused the API key for {self.where} (403): check the library id and "
                "that the key may read (and, to save, write) it; `/papers me zotero connect` again."
            ) from None
        except zotero_errors.ResourceNotFoundError:
            raise ZoteroRefused(f"Zotero has no library {self.where} (404).") from None
        except zotero_errors.PreConditionFailedError:
            raise
        except (zotero_errors.PyZoteroError, httpx.HTTPError) as exc:
            code = getattr(getattr(exc, "response", None), "status_code", None) or _code(str(exc))
            raise ZoteroRefused(
                f"Zotero could not be reached or answered with an error"
                f"{f' ({code})' if code else ''}; try again later."
            ) from None

    # -- reads for sync -------------------------------------------------------------------------

    def changed_since(self, version: int) -> tuple[dict[str, int], int]:
        """Keys and versions of items changed after ``version``, and the library's version now;
        NotModified when nothing did."""
        self._z.extra_headers = {"If-Modified-Since-Version": str(version)}
        try:
            versions = self._call(self._z.item_versions, since=version)
        finally:
            self._z.extra_headers = {}
        return dict(versions or {}), int(self._z.request.headers.get("last-modified-version", 0))

    def items(self, keys: list[str]) -> Iterator[dict[str, Any]]:
        """The items' data, read ``BATCH`` keys a request."""
        for i in range(0, len(keys), BATCH):
            part = ",".join(keys[i : i + BATCH])
            for item in self._call(self._z.items, itemKey=part, limit=BATCH):
                yield item.get("data", item)

    def deleted_since(self, version: int) -> list[str]:
        """Keys of items deleted (emptied from the trash) after ``version``."""
        found = self._call(self._z.deleted, since=version) or {}
        return list(found.get("items", []))

    # -- writes for save ------------------------------------------------------------------------

    def collection(self, name: str) -> str:
        """The key of the top-level collection ``name``, created once if missing."""
        for c in self._call(lambda: self._z.everything(self._z.collections_top())):
            data = c.get("data", c)
            if data.get("name") == name and not data.get("deleted"):
                return str(data["key"])
        created = self._write(lambda v: self._z.create_collections([{"name": name}], v))
        return str(created["successful"]["0"]["key"])

    def find(self, url: str | None, marks: list[str]) -> str | None:
        """The key of a live item with this URL, or whose `extra`/ids hold one of ``marks``."""
        for mark in [m for m in [url, *marks] if m]:
            for item in self._call(self._z.items, q=mark, qmode="everything", limit=25):
                data = item.get("data", item)
                if data.get("deleted"):
                    continue
                text = " ".join(str(data.get(f, "")) for f in ("extra", "archiveID", "DOI"))
                if (url and data.get("url") == url) or any(m in text for m in marks):
                    return str(data["key"])
        return None

    def alive(self, key: str) -> bool:
        """Whether the item ``key`` is in the library and not in its trash."""
        try:
            found = self._call(self._z.item, key)
        except ZoteroRefused:
            return False
        data = found.get("data", found) if isinstance(found, dict) else {}
        return bool(data) and not data.get("deleted")

    def create(self, item: dict[str, Any]) -> str:
        """Create one item; its new key."""
        out = self._write(lambda v: self._z.create_items([item], last_modified=v))
        if out.get("failed"):
            fail = next(iter(out["failed"].values()))
            raise ZoteroRefused(
                f"Zotero refused the item ({fail.get('code')}: {str(fail.get('message'))[:120]})."
            )
        return str(out["successful"]["0"]["key"])

    def _write(self, send: Any) -> Any:
        """A write under the library's version; on 412 (the library moved meanwhile) the
        version is read again and the write sent once more."""
        version = self._call(self._z.last_modified_version)
        try:
            return self._call(send, version)
        except zotero_errors.PreConditionFailedError:
            version = self._call(self._z.last_modified_version)
            try:
                return self._call(send, version)
            except zotero_errors.PreConditionFailedError:
                raise ZoteroRefused(
                    "Your Zotero library kept changing while saving (412); try again."
                ) from None


def _code(text: str) -> int | None:
    m = re.search(r"Code: (\d{3})", text)
    return int(m.group(1)) if m else None
