"""Numbers in commands read the same whatever the keyboard: full-width digits are ASCII everywhere.

Repro: `/papers schedule 0９:00` was accepted but `/papers size ２` refused. Breaks tried on
purpose (each turned a test red): `numeric_text` dropped from `set_size`, from `parse_time`
(then '٠٩:٠٠' in Arabic-Indic digits was accepted by `\\d`), from `set_threshold`.
"""

from __future__ import annotations

import pytest

from bot.commands.core import Context
from digest.models import ChannelRef

LAB = ChannelRef("console", "lab")


def say(app, text: str):
    return app.commands.handle(text, Context(LAB, "ann"))


@pytest.mark.parametrize(
    ("typed", "ascii_"),
    [
        ("schedule ０９：３０", "schedule 09:30"),
        ("schedule 0９:00", "schedule 09:00"),
        ("size ２", "size 2"),
        ("size １２", "size 12"),
        ("threshold ０．５", "threshold 0.5"),
    ],
)
def test_full_width_numbers_mean_the_ascii_ones(app, typed, ascii_):
    full = say(app, typed)
    assert not full.error, full.text
    assert full.text == say(app, ascii_).text


@pytest.mark.parametrize(
    "typed", ["size ٢", "schedule ٠٩:٠٠", "threshold ٠.٥", "size ²", "schedule ²:00"]
)
def test_other_digits_are_refused_everywhere(app, typed):
    assert say(app, typed).error


def test_unsubscribe_and_search_page_numbers(app):
    say(app, "subscribe graph neural networks")
    say(app, "subscribe diffusion models")
    assert say(app, "unsubscribe ２").text == "Stopped following 'diffusion models'."
    assert say(app, "search graph page:２").text == say(app, "search graph page:2").text
    assert say(app, "search graph year:２０２６").text == say(app, "search graph year:2026").text
