"""Network I/O for ingest: polite HTTP with retries. Parsing lives in ``parse`` and ``feeds``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from digest.errors import IngestError

RETRY_STATUS = {429, 500, 502, 503, 504}


def _retry_after(value: str | None, default: float) -> float:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date)."""
    if not value:
        return default
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return default


def _where(url: str, params: dict[str, Any] | None) -> str:
    """The URL that was tried, with its query, for the error line."""
    return str(httpx.URL(url, params=params)) if params else url


def _reason(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__


class PoliteClient:
    """HTTP GETs spaced ``min_interval`` apart per host, retrying 429/5xx with backoff."""

    def __init__(
        self,
        min_interval: float = 3.0,
        retries: int = 4,
        backoff: float = 2.0,
        max_wait: float = 120.0,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.min_interval, self.retries, self.backoff, self.max_wait = (
            min_interval,
            retries,
            backoff,
            max_wait,
        )
        self.sleep = sleep
        self._last: dict[str, float] = {}
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)),
            follow_redirects=True,
            headers={"User-Agent": "digestbot/0.1 (research digest bot)"},
        )

    def _pace(self, url: str) -> None:
        host = urlsplit(url).netloc
        wait = self._last.get(host, -1e9) + self.min_interval - time.monotonic()
        if wait > 0:
            self.sleep(wait)
        self._last[host] = time.monotonic()

    def get(self, url: str, params: dict[str, Any] | None = None) -> httpx.Response:
        """GET ``url``; raises IngestError with one line when it finally fails."""
        for attempt in range(self.retries + 1):
            self._pace(url)
            try:
                resp = self._client.get(url, params=params)
            except httpx.ConnectError as exc:  # no route, no DNS, refused: retrying will not help
                raise IngestError(f"Cannot reach {_where(url, params)}: {_reason(exc)}") from exc
            except httpx.HTTPError as exc:
                if attempt == self.retries:
                    raise IngestError(
                        f"Cannot reach {_where(url, params)}: {_reason(exc)}"
                    ) from exc
                self.sleep(min(self.max_wait, self.backoff * 2**attempt))
                continue
            if resp.status_code in RETRY_STATUS and attempt < self.retries:
                default = self.backoff * 2**attempt
                self.sleep(
                    min(self.max_wait, _retry_after(resp.headers.get("Retry-After"), default))
                )
                continue
            if resp.status_code >= 400:
                raise IngestError(f"{url} answered HTTP {resp.status_code}.")
            return resp
        raise IngestError(f"{url} kept failing after {self.retries} retries.")

    def close(self) -> None:
        """Close the underlying connection pool."""
        self._client.close()


def arxiv_pages(
    client: PoliteClient, base_url: str, query: str, max_results: int = 200, page_size: int = 100
) -> Iterator[bytes]:
    """Atom pages of an arXiv export-API search, newest submissions first."""
    for start in range(0, max_results, page_size):
        params = {
            "search_query": query,
            "start": start,
            "max_results": min(page_size, max_results - start),
            "sortBy": "submittedDate",
            "sortOrder": "descending",
        }
        data = client.get(base_url, params=params).content
        yield data
        if data.count(b"<entry") < params["max_results"]:
            return


def arxiv_rss(client: PoliteClient, rss_url: str, category: str) -> bytes:
    """The daily RSS listing of one arXiv category (e.g. cs.LG)."""
    return client.get(f"{rss_url.rstrip('/')}/{category}").content


def openreview_pages(
    client: PoliteClient, base_url: str, venue_id: str, page_size: int = 1000
) -> Iterator[dict[str, Any]]:
    """Pages of accepted notes for an OpenReview venue id (API v2), until exhausted."""
    offset = 0
    while True:
        params = {"content.venueid": venue_id, "offset": offset, "limit": page_size}
        resp = client.get(f"{base_url.rstrip('/')}/notes", params=params)
        try:
            payload = resp.json()
        except ValueError as exc:
            raise IngestError(
                f"OpenReview answered with something that is not JSON: {exc}"
            ) from exc
        yield payload
        notes = payload.get("notes") if isinstance(payload, dict) else None
        if not notes or len(notes) < page_size:
            return
        offset += len(notes)
