"""`python -m bot` runs the digestbot command line (same as the `digestbot` script)."""

import sys

from bot.cli.main import entry

sys.exit(entry())
