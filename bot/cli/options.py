"""CLI input: numeric options (read by the same parser as chat numbers) and query files."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from digest.errors import DigestError
from digest.models import ChannelRef
from digest.text.characters import has_surrogates, has_visible
from digest.text.files import read_text_file
from digest.text.numbers import whole_number
from digest.text.topic_text import MAX_QUERY_CHARS, query_too_long

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


#: Who types at `digestbot run`'s console prompt; `cmd` on a console channel is the same person,
#: so `/papers me …` reaches one personal digest (console:@you) from both.
CONSOLE_USER = "you"


#: The platforms digestbot can deliver to; a channel anywhere else would never get a digest.
PLATFORMS = ("console", "slack", "discord")


#: Per platform: (workspace id, channel id, what to say). A personal digest's id is ``@<user>``.
ID_RULES = {
    "slack": (
        r"[A-Z][A-Z0-9]{0,30}",
        r"@?[A-Z][A-Z0-9]{0,30}",
        "Slack ids are uppercase letters and digits, e.g. slack:T123/C456",
    ),
    "discord": (
        r"[0-9]{1,20}",
        r"@?[0-9]{1,20}",
        "Discord ids are numbers (snowflakes), e.g. discord:81384788765712384/81384788765712385",
    ),
    "console": (
        r"",
        r"[^\s:\x00-\x1f\x7f\ud800-\udfff]{1,64}",
        "console channels are a name of at most 64 characters without spaces, e.g. console:lab",
    ),
}


def _ref(text: str) -> ChannelRef:
    ref = ChannelRef.parse(text)
    if ref.platform not in PLATFORMS:
        raise DigestError(
            f"Unknown platform {ref.platform[:20]!r}: channels are {', '.join(PLATFORMS)}."
        )
    workspace, channel, rule = ID_RULES[ref.platform]
    # ids end up in `channels` output, logs and API calls: a space or a 5000-char id breaks them
    if not (re.fullmatch(workspace, ref.workspace) and re.fullmatch(channel, ref.channel_id)):
        shown = text.strip() if len(text.strip()) <= 60 else text.strip()[:60] + "…"
        raise DigestError(f"Not a valid channel {shown!r}: {rule}.")
    return ref


def cli_user(user: str | None, ref: ChannelRef) -> str:
    """Who a command-line action is by: ``--user``, else `run`'s console user on console channels
    (so `feedback` and `cmd` there are the same person as the prompt), else ``cli``."""
    if user is None:
        return CONSOLE_USER if ref.platform == "console" else "cli"
    if not user.strip():  # an empty name would be a voter no one can be, or silently `you`
        raise DigestError("--user needs a name, e.g. --user ann.")
    if has_surrogates(user):  # bytes that are not UTF-8 on the command line: nothing can store them
        raise DigestError("--user holds bytes that are not UTF-8; retype the name.")
    return user.strip()


#: `--user`: who a command runs as (shared by `cmd` and `import-library`).
UserOption = Annotated[
    str | None,
    typer.Option(
        "--user", help="As this user (default: the console's user on console:, else cli)."
    ),
]
