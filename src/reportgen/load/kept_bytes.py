"""The bytes a listing read, kept for the stages that use them again, packed end to end.

A first build reads every file of a run folder to hash it, and keeps the bytes so that
the audit, the sheets and the store do not read them again: some 200,000 small files
for 100,000 calls. Held as one ``bytes`` object each, every file also carried a
reference count, and the page writers are forked copies of the build: a count changed
by either process is a write, which copies the page it is on, so each page of file
bytes that a sheet touched was held twice until the sheets were written. Packed in a
few buffers, the bytes are never written once the listing is done, and the copies
share them.

Files of ``WHOLE_FROM`` bytes or more (the call log, a long transcript) are kept as
they were read: they are few, and the log is then held once (the listing hands back the
very object the log reader compares it with).
"""

from __future__ import annotations

from bisect import bisect_right

WHOLE_FROM = 1 << 16  # bytes: from this size a file is kept as its own object
_LENGTH_BITS = 32  # a packed file's place is one int: its offset, then its length
_LENGTH_MASK = (1 << _LENGTH_BITS) - 1


class KeptBytes:
    """Files' bytes by relative path: ``add`` while a folder is listed, then read with
    ``get`` (a fresh ``bytes`` each time; a buffer itself is never handed out).

    A buffer can move while it grows, so one that a reader in another thread may use is
    never grown again: ``share`` seals the buffer in use, and later files go to a new one."""

    __slots__ = ("buffers", "starts", "end", "spans", "whole", "_by_sha")

    def __init__(self) -> None:
        self.buffers = [bytearray()]
        self.starts = [0]  # where each buffer starts, counting the buffers before it end to end
        self.end = 0
        self.spans: dict[str, int] = {}  # rel -> offset << 32 | length, the offset counted as ``starts``
        self.whole: dict[str, bytes] = {}  # rel -> bytes, for files of WHOLE_FROM bytes or more
        self._by_sha: dict[str, int | bytes] = {}  # while adding: a content many calls share is kept once

    def add(self, rel: str, sha256: str, data: bytes) -> None:
        first = self._by_sha.get(sha256)
        if first is None:
            if len(data) >= WHOLE_FROM:
                first = data
            else:
                first = self.end << _LENGTH_BITS | len(data)
                self.buffers[-1] += data
                self.end += len(data)
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
        i = bisect_right(self.starts, start) - 1 if len(self.starts) > 1 else 0
        start -= self.starts[i]
        with memoryview(self.buffers[i]) as view:
            return view[start:start + (span & _LENGTH_MASK)].tobytes()

    def share(self) -> "KeptBytes":
        """The files kept so far, for a reader in another thread: their buffer is sealed,
        not copied (this one starts a new buffer for the files added after)."""
        shared = KeptBytes()
        shared.buffers, shared.starts, shared.end = list(self.buffers), list(self.starts), self.end
        shared.spans, shared.whole = dict(self.spans), dict(self.whole)
        if self.buffers[-1]:
            self.buffers.append(bytearray())
            self.starts.append(self.end)
        return shared

    def __contains__(self, rel: object) -> bool:
        return rel in self.spans or rel in self.whole

    def __len__(self) -> int:
        return len(self.spans) + len(self.whole)
