"""Who may change a channel's digest: the one rule for every platform's commands and the Slack Home."""

from __future__ import annotations

from collections.abc import Collection

from digest.models import PERSONAL_MARK, Channel


def may_change(
    channel: Channel, user: str, admin: bool, restricted_platforms: Collection[str] = ()
) -> bool:
    """Whether ``user`` may change ``channel``'s digest.

    A personal digest is its person's alone. A shared channel: its platform's admins (``admin``:
    a Slack workspace admin, Discord's Manage Channels, the operator at the console or command
    line) always; everyone else unless it is limited to admins (`option admin-only`). Then, where
    that limit is opt-in (Slack, the console), whoever set the digest up or locked it keeps
    control; where it is the default (``restricted_platforms``: Discord), the platform's
    permission decides alone. Being in the channel is the platform's to prove: typing a command
    there does; the Slack Home asks Slack.
    """
    if channel.ref.personal:
        return channel.ref.channel_id == PERSONAL_MARK + user
    if admin or not channel.admin_only:
        return True
    return channel.owner_user == user and channel.ref.platform not in restricted_platforms
