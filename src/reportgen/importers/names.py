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


def readable_id(name: str, taken: set[str]) -> str:
    """``name`` as an id a reader recognises: runs of other characters become "-", and a
    short hash of the name is added only when that id is already ``taken``."""
    base = _UNSAFE.sub("-", name).strip("-.")[:80].strip("-.") or "x"
    if base not in taken:
        return base
    return safe_id(name, taken | {base})


def model_ids(models: list[str]) -> dict[str, str]:
    """A service id per model name: the name after its provider prefix ("openai/gpt-4o-mini"
    -> "gpt-4o-mini") where that is unique among ``models``, else the whole name made safe,
    and a short hash only when two names still meet."""
    short = {m: _UNSAFE.sub("-", m.rsplit("/", 1)[-1]).strip("-.")[:80].strip("-.") or "x" for m in models}
    counts: dict[str, int] = {}
    for value in short.values():
        counts[value] = counts.get(value, 0) + 1
    taken: set[str] = set()
    ids = {}
    for model in models:
        sid = readable_id(short[model] if counts[short[model]] == 1 else model, taken)
        taken.add(sid)
        ids[model] = sid
    return ids
