"""`python -m bot` runs the digestbot command line (same as the `digestbot` script)."""

import sys

from bot.cli import entry

sys.exit(entry())
