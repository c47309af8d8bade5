"""Discord adapter: embed rendering, posting through discord.py, and `/papers` app commands."""
