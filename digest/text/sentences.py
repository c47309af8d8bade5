"""Plain text split into sentences."""

from __future__ import annotations

import re


def sentences(text: str) -> list[str]:
    """Split plain text into sentences without breaking decimals like 2.5 or e.g."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z(\"'])", text)
    return [p.strip() for p in parts if p.strip()]
