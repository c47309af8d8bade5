"""The App Home tab: a user's manageable channels and personal digest, with quick actions."""

from __future__ import annotations

from bot.adapters.slack.blocks import MAX_SECTION, cut, markup, plain
from bot.adapters.slack.limits import MAX_VIEW_BLOCKS as MAX_HOME_BLOCKS  # views.publish limit
from digest.channels.service import ChannelService
from digest.models import Channel

INTRO = (
    "Daily research-paper digests. In any channel: `/papers subscribe <topic>`; for yourself: "
    "`/papers me subscribe <topic>`, or write `subscribe <topic>` to me here."
)


def _channel_blocks(channels: ChannelService, ch: Channel) -> list[dict]:
    subs = channels.lookup.subscriptions(ch.id)
    last = channels.history.last(ch.id)
    where = "Your personal digest (DM)" if ch.ref.personal else f"<#{ch.ref.channel_id}>"
    follows = ", ".join(f"{s.kind.value}: {s.text}" for s in subs[:8]) or "nothing yet"
    state = f"⏸ {ch.pause_state}" if ch.paused else "active"
    lines = [
        f"*{where}* — {markup(state)}",  # a reason's `/papers resume` stays copyable
        f"Follows: {plain(follows)}",
        f"Digest at {ch.digest_time} {plain(ch.timezone)} on {ch.weekdays}, up to {ch.digest_size} papers",
        f"Last digest: {last.digest_date} ({last.status})" if last else "No digest yet",
    ]
    toggle = ("home_resume", "Resume") if ch.paused else ("home_pause", "Pause")
    buttons = [
        {
            "type": "button",
            "action_id": toggle[0],
            "text": {"type": "plain_text", "text": toggle[1]},
            "value": str(ch.id),
        },
        {
            "type": "button",
            "action_id": "home_preview",
            "text": {"type": "plain_text", "text": "Preview"},
            "value": str(ch.id),
        },
    ]
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": cut("\n".join(lines), MAX_SECTION)}},
        {"type": "actions", "block_id": f"home:{ch.id}", "elements": buttons},
        {"type": "divider"},
    ]


def home_view(channels: ChannelService, visible: list[Channel]) -> dict:
    """The Home tab showing ``visible`` (the digests this user may see; see access.manageable)."""
    blocks: list[dict] = [
        {"type": "header", "text": {"type": "plain_text", "text": "digestbot"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": markup(INTRO)}},
        {"type": "divider"},
    ]
    for ch in visible:
        if len(blocks) + 3 > MAX_HOME_BLOCKS - 1:
            blocks.append(
                {"type": "context", "elements": [{"type": "mrkdwn", "text": "…and more channels."}]}
            )
            break
        blocks += _channel_blocks(channels, ch)
    if not visible:
        blocks.append(
            {"type": "section", "text": {"type": "mrkdwn", "text": "No digests for you here yet."}}
        )
    return {"type": "home", "blocks": blocks}
