"""Passwords in URLs, hidden before a URL is shown or logged."""

from __future__ import annotations

import re

_URL_PASSWORD = re.compile(r"(?<=://)([^:/@\s]*):[^@\s]*@")


def hide_password(text: str) -> str:
    """``text`` with the password of any URL in it replaced by *** (also for unparseable URLs)."""
    return _URL_PASSWORD.sub(r"\1:***@", text)
