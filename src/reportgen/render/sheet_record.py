"""What a build remembers of each call sheet it made: where the sheet's files are in the
store, so that a later build with the same sheet key publishes them without making them
again. Read from the cache, so checked: an entry that is not a record of this shape
(store names, sizes) is dropped, and every file it names is checked in the store, by
its content, before it is reused (write.store.present)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_STORE_NAME = re.compile(r"[0-9a-f]{64}\.[a-z0-9]{1,8}(\.[a-z0-9]{1,8})?")


@dataclass(frozen=True)
class SheetRecord:
    """A sheet's page and pack (None: its calls have no artifact), by store name and
    size, and the other files it published on their own (name, size)."""

    page: str
    page_size: int
    pack: str | None
    pack_size: int
    alone: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> list:
        return [self.page, self.page_size, self.pack, self.pack_size, [[name, size] for name, size in self.alone]]

    @classmethod
    def from_json(cls, value: object) -> SheetRecord | None:
        """The record a cache entry holds, or None when it is not one."""
        if not isinstance(value, list) or len(value) != 5:
            return None
        page, page_size, pack, pack_size, alone = value
        if not (_name(page) and _size(page_size) and (pack is None or _name(pack)) and _size(pack_size)
                and isinstance(alone, list)):
            return None
        files = []
        for item in alone:
            if not (isinstance(item, list) and len(item) == 2 and _name(item[0]) and _size(item[1])):
                return None
            files.append((item[0], item[1]))
        return cls(page, page_size, pack, pack_size, tuple(files))


def _name(value: object) -> bool:
    return isinstance(value, str) and _STORE_NAME.fullmatch(value) is not None


def _size(value: object) -> bool:
    return type(value) is int and value >= 0
