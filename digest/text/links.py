"""What counts as a link anyone may follow: an http(s) URL with a host and no spaces."""

from __future__ import annotations

import re

_HTTP = re.compile(r"https?://[^\s/?#]+\.[^\s/?#]+(?:[/?#]\S*)?", re.IGNORECASE)


def is_http(url: str | None) -> bool:
    """True for an http(s) URL with a dotted host ('https://arxiv.org/abs/…'); False for text
    ('see paper'), other schemes ('javascript:…', 'file:…') and an empty value."""
    return url is not None and _HTTP.fullmatch(url.strip()) is not None


def http_only(url: str | None) -> str | None:
    """``url`` if it is one (is_http), else None: a link is rendered only then."""
    return url.strip() if url and is_http(url) else None
