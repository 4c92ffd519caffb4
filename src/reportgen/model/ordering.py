"""The one order of ids everywhere: numbers inside an id compare by value."""

from __future__ import annotations

import re


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key that orders the numbers inside ids by value (seed-2 before seed-10, b2
    before b10)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text))
