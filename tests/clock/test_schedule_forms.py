"""Exactly the time forms the README lists for `schedule` are accepted; the ambiguous ones are not.

Breaks that turn this red: parse_time's HHMM alternative removed (`0930` refused, though the
README lists it); one-digit minutes allowed (`9:5` read as 09:05); the README's list of forms
edited without the parser (the README check below); either refused form losing its hint
(`930` once got none: `_hint`'s three-digit branch removed); `_TWELVE` or `_NAMED` removed
(`9am`, `9:30pm`, `noon`, `midnight` refused again); `_schedule_words` not joining a separate
`am` (`9 am` read as a time zone); `12am` read as noon (`hour % 12` dropped).
"""

import re
from pathlib import Path

import pytest

from digest.clock.times import parse_time
from digest.errors import DigestError
from tests.commands.test_commands import say

README = (Path(__file__).parents[2] / "docs" / "commands.md").read_text(encoding="utf-8")
ACCEPTED = {
    "09:30": "09:30",
    "9:30": "09:30",
    "9.30": "09:30",
    "9h30": "09:30",
    "0930": "09:30",
    "9": "09:00",
    "21h": "21:00",
    "9am": "09:00",
    "9 am": "09:00",
    "9:30pm": "21:30",
    "9.30 p.m.": "21:30",
    "12am": "00:00",
    "12pm": "12:00",
    "noon": "12:00",
    "midnight": "00:00",
}
REFUSED = ["9:5", "930"]
HINTS = {
    "9:5": "(minutes take two digits: 9:05 or 9:50?)",
    "930": "(three digits: 9:30 is written 0930 or 9:30)",
}


def _schedule_row() -> str:
    return next(line for line in README.splitlines() if line.startswith("| `schedule <HH:MM>"))


def test_the_readme_lists_exactly_these_forms():
    row = _schedule_row()
    typed = re.search(
        r"the time may be typed (.*?); minutes always take two digits, so (.*?) are refused", row
    )
    assert typed, row
    listed = set(re.findall(r"`([^`]+)`", typed.group(1)))
    assert listed == set(ACCEPTED), listed
    assert set(re.findall(r"`([^`]+)`", typed.group(2))) == set(REFUSED)


@pytest.mark.parametrize(("typed", "stored"), ACCEPTED.items())
def test_every_listed_form_is_accepted(app, typed, stored):
    assert parse_time(typed) == stored
    reply = say(app, f"schedule {typed} UTC")
    assert not reply.error and stored in reply.text, reply.text


@pytest.mark.parametrize("typed", REFUSED)
def test_ambiguous_forms_are_refused_with_the_accepted_ones_named(app, typed):
    with pytest.raises(DigestError, match="09:30, 9:30, 0930, 21, 9am, 9:30pm, noon or midnight"):
        parse_time(typed)
    reply = say(app, f"schedule {typed}")
    assert reply.error and "Time must look like" in reply.text
    assert HINTS[typed] in reply.text, reply.text  # each refused form says what to type instead


@pytest.mark.parametrize("typed", ["13pm", "0am", "9:75pm"])
def test_an_impossible_twelve_hour_time_is_refused(app, typed):
    reply = say(app, f"schedule {typed} UTC")
    assert reply.error and "With am/pm the hour runs 1 to 12" in reply.text, reply.text
