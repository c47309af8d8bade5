"""What a typed subscription text may be: quotes dropped, spaces folded, no control characters."""

from __future__ import annotations

import unicodedata

from digest.errors import DigestError
from digest.text.characters import has_surrogates, has_visible

MAX_TOPIC_CHARS = 200
#: The longest search query, as a chat command's limit: longer is a pasted document (a
#: 100,000-character one kept the CLI busy for minutes without a word).
MAX_QUERY_CHARS = 4000

#: Opening quote -> its closing quote, as people type them (straight or typographic).
QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»"}


# Bidirectional embedding/override/isolate marks: invisible, and they reorder displayed text.
BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def query_too_long(chars: int) -> str:
    """Why a search query is refused for its length."""
    return f"The query is too long ({chars:,} characters; the limit is {MAX_QUERY_CHARS:,})."


def clean_topic(text: str) -> str:
    """A subscription text: single-spaced, unquoted, non-empty, bounded."""
    topic = " ".join(text.split())
    while len(topic) > 1 and topic[0] in QUOTES and topic[-1] == QUOTES[topic[0]]:
        topic = topic[1:-1].strip()  # `subscribe "graph neural networks"` means the words
    if not has_visible(topic):  # e.g. only U+200B: stored, it would list as '' and match nothing
        raise DigestError("Say what to follow, e.g. `subscribe sparse autoencoders`.")
    if has_surrogates(topic):  # undecodable bytes on a command line, a JSON \ud800: unstorable
        raise DigestError("That text holds a broken character (not UTF-8); please retype it.")
    bad = next((c for c in topic if unicodedata.category(c) == "Cc" or c in BIDI), None)
    if bad is not None:  # ESC/BEL would reach terminals and logs; bidi marks reorder what is shown
        raise DigestError(
            f"Topics cannot contain control characters (found U+{ord(bad):04X}); type plain text."
        )
    if len(topic) > MAX_TOPIC_CHARS:
        raise DigestError(
            f"Topics are at most {MAX_TOPIC_CHARS} characters; that one has {len(topic)}."
        )
    return topic
