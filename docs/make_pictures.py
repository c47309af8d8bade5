"""Redraw docs/digest-console.svg: the demo channel's first digest as `digestbot run` prints it.

Run from the repository root: `python docs/make_pictures.py` (uses a scratch database).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.text import Text

OUT = Path(__file__).resolve().parent / "digest-console.svg"


def main() -> None:
    """Start `digestbot run` on a fresh database, type `exit`, and draw what it printed."""
    with tempfile.TemporaryDirectory() as folder:
        env = {"DIGESTBOT_DATABASE_URL": f"sqlite:///{folder}/demo.db", "PATH": "",
               "DIGESTBOT_INDEX_DIR": f"{folder}/index", "DIGESTBOT_HEALTH_PORT": "0",
               "DIGESTBOT_SEMANTIC": "off", "COLUMNS": "100"}  # fmt: skip
        shown = subprocess.run([sys.executable, "-m", "bot", "run"], input="exit\n", env=env,
                               capture_output=True, text=True, timeout=300, cwd=folder).stdout  # fmt: skip
    lines = shown.split("papers>")[0].rstrip().splitlines()
    console = Console(record=True, width=100, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(Text("$ digestbot run", style="bold green"))
    for line in lines[:24]:
        console.print(Text(line), soft_wrap=True)
    console.print(Text("…", style="dim"))
    console.save_svg(str(OUT), title="digestbot run")


if __name__ == "__main__":
    main()
