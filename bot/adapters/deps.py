"""What an adapter's callbacks need from the composition root, the same on Slack and Discord."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.commands import Commands
from bot.runtime.effects import EffectExecutor
from digest.channels.service import ChannelService
from digest.papers.pages import SearchPages


@dataclass
class Deps:
    """The command core, the channel service, the one effect executor and the searches kept
    behind page buttons. Each platform's fields follow (None or a no-op where it has none)."""

    commands: Commands
    channels: ChannelService
    effects: EffectExecutor | None = None  # None: replies post no digest now (tests, tools)
    pages: SearchPages | None = None  # None: kept in the channels' database, on their clock
    #: Slack: what to do when a workspace uninstalls the app.
    on_uninstall: Callable[[str], Awaitable[None]] | None = None
    #: Discord: rewrites the core's `/papers ...` hints to its slash commands (set by Papers).
    syntax: Callable[[str], str] = str

    def __post_init__(self) -> None:
        self.effects = self.effects or EffectExecutor(self.channels)
        self.pages = self.pages or SearchPages.over(self.channels.papers)
