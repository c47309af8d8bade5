"""CLI input: numeric options (read by the same parser as chat numbers) and query files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from digest.channels.topic_text import MAX_QUERY_CHARS, query_too_long
from digest.errors import DigestError
from digest.text.characters import has_surrogates, has_visible
from digest.text.numbers import whole_number

#: Bounds no real use reaches; beyond them a number is a typo (and SQLite's integers overflow).
MAX_LIST = 100_000
MAX_OFFSET = 1_000_000_000
MAX_RESULTS = 1_000
MAX_PAGE = 1_000_000


def whole(option: str, low: int, high: int | None = None) -> Callable[[str | int], int]:
    """A typer ``parser`` for ``option``: a whole number in [low, high] or one `error:` line."""

    def parse(text: str | int) -> int:
        return whole_number(str(text), option, low, high)  # typer passes defaults as ints

    return parse


def read_text_file(path: Path) -> str:
    """The UTF-8 text of ``path``; a missing file, a directory or other bytes is one clear error."""
    if not path.exists():
        raise DigestError(f"No such file: {path}")
    if path.is_dir():
        raise DigestError(f"'{path}' is a directory, not a file.")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DigestError(f"cannot read '{path}': not UTF-8 text (byte {exc.start}).") from None
    except OSError as exc:
        raise DigestError(f"cannot read '{path}': {exc.strerror or 'unreadable'}.") from None


def read_queries(path: Path) -> list[str]:
    """The queries of a --queries-file, one a line; a bad line is one error naming its number."""
    lines = read_text_file(path).splitlines()
    return [_query_line(path, n, line) for n, line in enumerate(lines, 1) if line.strip()]


_JSON_KINDS = {
    type(None): "null",
    bool: "true/false",
    int: "a number",
    float: "a number",
    list: "a list",
    dict: "an object",
}


def _not_a_json_value(path: Path, n: int, line: str) -> None:
    """Refuse a line that is JSON but no object (`["sparse"]`, `"text"`, `42`): searching its raw
    text, brackets and quotes included, is never what was meant."""
    try:
        value = json.loads(line)
    except ValueError:
        return  # plain text: the query itself
    kind = "text in quotes" if isinstance(value, str) else _JSON_KINDS.get(type(value), "JSON")
    raise DigestError(
        f"{path}:{n}: a JSON value ({kind}), not a query: write the words themselves "
        'or {"query": "..."}.'
    )


def _query_line(path: Path, n: int, line: str) -> str:
    """One line's query: the text itself, or a JSON object's 'query', which must be text."""
    query = _query_of(path, n, line)
    if len(query) > MAX_QUERY_CHARS:
        raise DigestError(f"{path}:{n}: {query_too_long(len(query))}")
    return query


def _query_of(path: Path, n: int, line: str) -> str:
    """The query a line holds, checked for what is not a query at all."""
    if not line.lstrip().startswith("{"):
        _not_a_json_value(path, n, line)
        if not has_visible(line):  # zero-width or punctuation only: nothing to search for
            raise DigestError(f"{path}:{n}: no letters or digits to search for.")
        return line
    try:
        query = json.loads(line)["query"]
    except (ValueError, KeyError, TypeError):
        raise DigestError(f"{path}:{n}: expected a JSON object with a 'query' field.") from None
    if not isinstance(query, str):  # str(5) or str(None) would search for '5' or 'None'
        kind = _JSON_KINDS.get(type(query), "something else")
        raise DigestError(f"{path}:{n}: 'query' must be text in quotes, got {kind}.")
    if not has_visible(query):
        raise DigestError(f"{path}:{n}: 'query' is empty; give a topic or a few words.")
    if has_surrogates(query):  # a "\ud800" escape: half a character, nothing can encode it
        raise DigestError(f"{path}:{n}: 'query' holds a lone surrogate (e.g. \\ud800).")
    return query
