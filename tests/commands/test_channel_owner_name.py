"""Channels are called by their name and remember who set them up (issue 23).

Breaks that turn this red: the list title built from the id again ("Channel C2"); claim() not
recording the owner (owner_user stays None); refusal() ignoring the owner (a non-admin who turned
admin-only on cannot turn it off); option admin-only on not making the caller the owner; a read
command (list) in a channel nobody set up creating it.
"""

from __future__ import annotations

from dataclasses import replace

from bot.commands import Context
from digest.models import ChannelRef

C2 = ChannelRef("slack", "C2", "T1")


def test_list_title_uses_the_channel_name_and_the_owner_is_recorded(app) -> None:
    ann = Context(ref=C2, user="U1", place="ml-papers")
    assert not app.commands.handle("subscribe diffusion models", ann).error
    reply = app.commands.handle("list", ann)
    assert reply.title == "Channel #ml-papers"
    assert app.store.channels.get(C2).owner_user == "U1"
    renamed = app.commands.handle("list", replace(ann, user="U2", place="papers"))
    assert renamed.title == "Channel #papers"  # renamed in Slack: the title follows
    assert app.store.channels.get(C2).owner_user == "U1"  # reading changes no owner


def test_whoever_turns_admin_only_on_can_turn_it_off(app) -> None:
    ann = Context(ref=C2, user="U1")
    app.commands.handle("subscribe diffusion models", ann)
    bea = Context(ref=C2, user="U2")  # not an admin; Slack only asks once admin-only is on
    assert not app.commands.handle("option admin-only on", bea).error
    bea_now = replace(bea, is_admin=False)
    assert not app.commands.handle("option admin-only off", bea_now).error
    assert not app.store.channels.get(C2).admin_only
    app.commands.handle("option admin-only on", bea)
    cat = Context(ref=C2, user="U3", is_admin=False)
    assert app.commands.handle("option quiet on", cat).error


def test_reading_a_channel_nobody_set_up_creates_nothing(app) -> None:
    nobody = ChannelRef("slack", "C9", "T1")
    reply = app.commands.handle("search diffusion", Context(ref=nobody, user="U1", place="x"))
    assert not reply.error and app.store.channels.get(nobody) is None
