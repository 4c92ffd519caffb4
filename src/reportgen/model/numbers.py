"""Numbers as the pages print them: rates, differences of rates, scores.

The rounding rules of ``render.present`` that the metric object (``model.metric``) also
needs; ``render.present`` re-exports them, and no other module rounds a number for a page.
"""

from __future__ import annotations

import math

MINUS = "\u2212"


def _signed(text: str) -> str:
    return text.replace("-", MINUS)


def percent(value: float | None, digits: int = 1) -> str:
    if value is None or not math.isfinite(value):
        return "undefined"
    if value == 0:
        return "0%"
    if value == 1:
        return "100%"
    text = f"{value * 100:.{digits}f}"
    floor = 10 ** -digits
    if float(text) == 0:
        return f"<{floor:.{digits}f}%"
    if float(text) == 100:
        return f">{100 - floor:.{digits}f}%"
    return f"{text}%"


def points(value: float | None, digits: int = 1) -> str:
    """A difference of rates, in percentage points, with an explicit sign."""
    if value is None or not math.isfinite(value):
        return "undefined"
    if value == 0:
        return "0.0"
    text = f"{value * 100:+.{digits}f}"
    if float(text) == 0:  # never print a non-zero difference as 0: show two significant digits
        text = f"{value * 100:+.2g}"
    return _signed(text)


def magnitude_points(value: float) -> str:
    """A registered threshold or margin, in percentage points, without a sign."""
    return f"{abs(value) * 100:g} points"


def score(value: float | None, signed: bool = True) -> str:
    """A score or a difference of scores, on the score's own scale (3 significant digits)."""
    if value is None or not math.isfinite(value):
        return "undefined"
    if value == 0:
        return "0"
    return _signed(f"{value:+.3g}" if signed else f"{value:.3g}")


def counted(n: int, noun: str, plural: str = "") -> str:
    """``n`` and its noun, in the singular for one: "1 call", "3 calls", "0 calls"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
