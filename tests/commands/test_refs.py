"""Channel references: `slack:T123/C456` and `discord:GUILD/CHANNEL` name a workspace's channel.

Breaks seen red: ChannelRef.parse without the workspace split (the id becomes "T123/C456");
a Slack/Discord ref without its workspace part accepted ("slack:T1" stored as channel T1).
"""

import pytest

from digest.errors import DigestError
from digest.models import ChannelRef


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("slack:T123/C456", ChannelRef("slack", "C456", "T123")),
        ("discord:77/111", ChannelRef("discord", "111", "77")),
        ("slack:T1/@U9", ChannelRef("slack", "@U9", "T1")),  # a personal digest (DM)
        ("console:lab", ChannelRef("console", "lab")),
        ("console:a/b", ChannelRef("console", "a/b")),  # the console has no workspaces
        ("SLACK:T1/C1", ChannelRef("slack", "C1", "T1")),
    ],
)
def test_refs_parse_and_print_back(text, ref):
    assert ChannelRef.parse(text) == ref
    assert ChannelRef.parse(str(ref)) == ref


@pytest.mark.parametrize(
    "text", ["slack:/C1", "slack:T1/", "discord:a/b/c", "lab", ":x", "slack:T1", "discord:G1"]
)
def test_malformed_refs_are_refused(text):
    with pytest.raises(DigestError):
        ChannelRef.parse(text)
