"""Ids the source format accepts, derived from names it may not (model names with
slashes and colons, task names with spaces), always the same for the same name."""

from __future__ import annotations

import hashlib
import re

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_id(name: str, taken: set[str] | None = None) -> str:
    """A readable id for ``name``: runs of other characters become "-"; a name that
    changed, or clashes with one in ``taken``, gets a short hash of the name."""
    base = _UNSAFE.sub("-", name).strip("-.") or "x"
    base = base[:60]
    if base == name and (taken is None or base not in taken):
        return base
    tagged = f"{base}-{hashlib.sha256(name.encode()).hexdigest()[:6]}"
    if taken is not None and tagged in taken:
        raise ValueError(f"two names map to the id {tagged!r}")
    return tagged
