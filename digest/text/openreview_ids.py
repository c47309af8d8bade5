"""OpenReview ids: read from forum and pdf links, and told from words when typed bare."""

from __future__ import annotations

import re

#: An OpenReview forum or pdf link ('https://openreview.net/forum?id=OZ7aImD4uQ&noteId=…').
LINK = re.compile(
    r"(?i)(?:https?://)?(?:www\.)?openreview\.net/(?:forum|pdf)/?\?(?:[^#\s]*&)?"
    r"id=([A-Za-z0-9_\-]{5,40})(?:[&#]\S*)?"
)
#: A bare OpenReview id as people paste it: 8 to 14 letters, digits, '_' or '-' ('NnMEadcdyD').
_BARE = re.compile(r"[A-Za-z0-9_\-]{8,14}")


def link_id(text: str) -> str | None:
    """The OpenReview id a forum or pdf link names; None for anything else."""
    m = LINK.fullmatch(text.strip())
    return m.group(1) if m else None


def looks_bare(token: str) -> bool:
    """True for a token shaped like an OpenReview id: a digit, or a capital after the first
    letter ('NnMEadcdyD'), so an ordinary word ('sparse', 'Transformers') is not one."""
    if not _BARE.fullmatch(token):
        return False
    return any(c.isdigit() for c in token) or any(c.isupper() for c in token[1:])
