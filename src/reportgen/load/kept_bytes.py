"""The bytes a listing read, kept for the stages that use them again, packed end to end.

A first build reads every file of a run folder to hash it and keeps the bytes, so that
the audit, the sheets and the store do not read them again: some 200,000 small files
for 100,000 calls. Held as one bytes object each, every one of them is also a
reference count, and the page writers are forked copies of the build: a count changed
by either process is a write, which copies the page it is on, so the files a sheet
shows were copied once for each build (some 700 MB at a million calls). Packed in one
buffer they are never written once the listing is done, and the copies share them.

Files of ``WHOLE_FROM`` bytes or more (the call log, a long transcript) are kept as
they were read: they are few, and the log is then held once (``kept`` returns the very
object that the log reader compares it with).
"""

from __future__ import annotations

WHOLE_FROM = 1 << 16  # bytes: from this size a file is kept as its own object
_LENGTH_BITS = 32  # a packed file's place is one int: its offset, then its length


class KeptBytes:
    """Files' bytes by relative path: ``add`` while a folder is listed, then read with
    ``get`` (a fresh ``bytes`` each time; the buffer itself is never handed out).

    Not to be added to once ``get`` may be called from another thread: the buffer can
    move while it grows. A listing hands its drawings on with ``copy``."""

    __slots__ = ("buffer", "spans", "whole", "_by_sha")

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.spans: dict[str, int] = {}  # rel -> offset << 32 | length, in ``buffer``
        self.whole: dict[str, bytes] = {}  # rel -> bytes, for files of WHOLE_FROM bytes or more
        self._by_sha: dict[str, int | bytes] = {}  # while adding: a content many calls share is kept once

    def add(self, rel: str, sha256: str, data: bytes) -> None:
        first = self._by_sha.get(sha256)
        if first is None:
            if len(data) >= WHOLE_FROM:
                first = data
            else:
                first = len(self.buffer) << _LENGTH_BITS | len(data)
                self.buffer += data
            self._by_sha[sha256] = first
        if isinstance(first, bytes):
            self.whole[rel] = first
        else:
            self.spans[rel] = first

    def done(self) -> "KeptBytes":
        """No more files: what only adding needed is let go of (an entry a distinct file)."""
        self._by_sha = {}
        return self

    def get(self, rel: str) -> bytes | None:
        span = self.spans.get(rel)
        if span is None:
            return self.whole.get(rel)
        start = span >> _LENGTH_BITS
        with memoryview(self.buffer) as view:
            return view[start:start + (span & ((1 << _LENGTH_BITS) - 1))].tobytes()

    def copy(self) -> "KeptBytes":
        """The files kept so far, in a buffer of their own (for a reader in another thread)."""
        other = KeptBytes()
        other.buffer = bytearray(self.buffer)
        other.spans, other.whole = dict(self.spans), dict(self.whole)
        return other

    def __contains__(self, rel: object) -> bool:
        return rel in self.spans or rel in self.whole

    def __len__(self) -> int:
        return len(self.spans) + len(self.whole)
