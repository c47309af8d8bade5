"""Channel ids typed on the command line follow each platform's form; anything else is one line.

Breaks that turn this red: the ID_RULES check in cli_channels._ref removed (`console:a b` makes a
channel whose id has a space; `discord:abc/def` and a 5000-character console id are accepted);
the Slack rule lowered to any text (`slack:t1/c1` accepted).
"""

import pytest

from tests.support.cli_proc import digestbot, one_error


@pytest.mark.parametrize(
    ("channel", "needle"),
    [
        ("console:a b", "without spaces"),
        ("console:" + "x" * 5000, "at most 64 characters"),
        ("discord:abc/def", "Discord ids are numbers"),
        ("discord:1/2x", "Discord ids are numbers"),
        ("slack:t1/c1", "uppercase letters and digits"),
        ("slack:T1/C 1", "uppercase letters and digits"),
    ],
)
def test_malformed_channel_ids_are_refused_and_create_nothing(tmp_path, channel, needle):
    line = one_error(digestbot(tmp_path, "subscribe", channel, "graphs"))
    assert needle in line and len(line) < 220, line
    assert "x" * 61 not in line  # a long id is cut with an ellipsis, not echoed whole
    listing = digestbot(tmp_path, "channels")
    assert "graphs" not in listing.stdout


@pytest.mark.parametrize(
    "channel",
    [
        "console:lab",
        "console:@ann",
        "slack:T1/C001",
        "slack:T1/@U9",
        "discord:81384788765712384/81384788765712385",
    ],
)
def test_well_formed_ids_still_work(tmp_path, channel):
    proc = digestbot(tmp_path, "subscribe", channel, "graphs")
    assert proc.returncode == 0 and "Now following topic 'graphs'" in proc.stdout, proc.stderr
