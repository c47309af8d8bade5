"""The `/papers` command core: importing this package registers every subcommand."""

from bot.commands import (  # noqa: F401 - registration
    handlers_channel,
    handlers_colleagues,
    handlers_library,
    handlers_mentions,
    handlers_papers,
    handlers_reading,
    handlers_zotero,
)
from bot.commands.core import Commands, Context
from bot.commands.replies import Reply

__all__ = ["Commands", "Context", "Reply"]
