"""The `/papers` command core: importing this package registers every subcommand."""

from bot.commands import handlers_channel, handlers_papers  # noqa: F401 - registration
from bot.commands.core import Commands, Context
from bot.commands.replies import Reply

__all__ = ["Commands", "Context", "Reply"]
