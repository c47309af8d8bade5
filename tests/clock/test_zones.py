"""Time zones: any case, common abbreviations, did-you-mean, and stored zones that vanished.

Deliberate breaks that turn these red: `usable_timezone` not used by `to_channel` (the list
command crashes with ZoneInfoNotFoundError); the case-insensitive lookup removed ("europe/paris").
"""

import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session

from bot.commands import Context
from digest.clock.zones import parse_timezone
from digest.errors import DigestError
from digest.models import ChannelRef
from digest.store.schema import ChannelRow


@pytest.mark.parametrize(
    ("typed", "zone"),
    [
        ("europe/paris", "Europe/Paris"),
        ("PST", "America/Los_Angeles"),
        ("cet", "Europe/Paris"),
        ("new york", "America/New_York"),
        ("Tokyo", "Asia/Tokyo"),
        ("utc", "UTC"),
    ],
)
def test_zones_people_type(typed, zone):
    assert parse_timezone(typed) == zone


@pytest.mark.parametrize(
    ("typed", "needle"),
    [
        ("Europe/Berln", "did you mean Europe/Berlin?"),
        ("IST", "Asia/Kolkata or Europe/Dublin"),
        ("Mars/Base", "e.g. Europe/Berlin"),
    ],
)
def test_bad_zones_say_what_to_type(typed, needle):
    with pytest.raises(DigestError, match=needle.replace("?", r"\?")):
        parse_timezone(typed)


def test_schedule_command_accepts_abbreviations_and_suggests(app):
    ctx = Context(ChannelRef("console", "lab"), "u1")
    assert "America/Los_Angeles" in app.commands.handle("schedule 08:30 pst", ctx).text
    reply = app.commands.handle("schedule 08:30 Europe/Berln", ctx)
    assert reply.error and "did you mean Europe/Berlin?" in reply.text


def test_a_stored_zone_that_no_longer_exists_falls_back_with_a_warning(app, caplog):
    ref = ChannelRef("console", "lab")
    app.channels.channel(ref)
    with Session(app.store.engine) as session:  # e.g. a zone renamed in a newer tzdata
        session.execute(update(ChannelRow).values(timezone="Mars/Olympus_Mons"))
        session.commit()
    reply = app.commands.handle("list", Context(ref, "u1"))
    assert not reply.error and "UTC" in reply.text
    assert "Mars/Olympus_Mons" in caplog.text and "no longer exists" in caplog.text
