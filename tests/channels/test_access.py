"""The one rule for who may change a channel's digest (digest/channels/access.py), as the command
core and the Slack Home both apply it.

Breaks that turn this red: admins let into someone else's personal digest (a Slack workspace
admin would see and control every DM digest in the Home); the owner of an admin-only channel
kept out where the limit is opt-in (Slack: who locked it could not unlock it); the owner let in
where the platform's permission decides alone (Discord: Manage Channels).
"""

import pytest

from digest.channels.access import may_change
from digest.models import Channel, ChannelRef

SLACK, DISCORD = ChannelRef("slack", "C1", "T1"), ChannelRef("discord", "111", "77")


def ch(ref: ChannelRef, admin_only: bool = False, owner: str | None = "ann") -> Channel:
    return Channel(id=1, ref=ref, admin_only=admin_only, owner_user=owner)


@pytest.mark.parametrize(
    ("channel", "user", "admin", "allowed"),
    [
        (ch(ChannelRef("slack", "@U1", "T1")), "U1", False, True),  # one's own personal digest
        (ch(ChannelRef("slack", "@U1", "T1")), "U2", True, False),  # never an admin's
        (ch(SLACK), "bob", False, True),  # an open channel: anyone there
        (ch(SLACK, admin_only=True), "bob", False, False),
        (ch(SLACK, admin_only=True), "bob", True, True),
        (ch(SLACK, admin_only=True), "ann", False, True),  # Slack: who locked it keeps control
        (ch(DISCORD, admin_only=True), "ann", False, False),  # Discord: the permission alone
        (ch(DISCORD, admin_only=True), "ann", True, True),
    ],
)
def test_who_may_change_a_digest(channel, user, admin, allowed):
    assert may_change(channel, user, admin, frozenset({"discord"})) is allowed
