"""The record of one file's hash that a build keeps for the next: its line of text."""

from __future__ import annotations

from dataclasses import dataclass

from reportgen.load.files import Stamp

SHA256_CHARS = 64


@dataclass(frozen=True, slots=True)
class HashedFile:
    """A file's sha256 as a build took it, with the size, times and inode the file had
    then: while they are the same, the file has the same bytes (as git's index has it).

    Kept as one line of text (``line``): ``size mtime_ns ctime_ns inode sha256``, the
    four numbers in decimal, the sha256 as 64 hex digits, one space between each. Only
    a line as ``line`` writes it parses (``parse``); its last 64 characters are taken as
    the sha256 as written (the bytes of a file are checked against it when read).
    """

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    sha256: str

    @classmethod
    def of(cls, st: Stamp, sha256: str) -> "HashedFile":
        return cls(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, sha256)

    def matches(self, st: Stamp) -> bool:
        """Whether the file ``st`` describes still has this record's size, times and inode."""
        return (self.size, self.mtime_ns, self.ctime_ns, self.inode) == (st.st_size, st.st_mtime_ns,
                                                                         st.st_ctime_ns, st.st_ino)

    def line(self) -> str:
        return stamp_text(self.size, self.mtime_ns, self.ctime_ns, self.inode) + self.sha256

    @classmethod
    def parse(cls, line: str) -> "HashedFile | None":
        """The record ``line`` holds; None for any other line."""
        try:
            size, mtime_ns, ctime_ns, inode, sha256 = line.split(" ", 4)
            record = cls(int(size), int(mtime_ns), int(ctime_ns), int(inode), sha256)
        except ValueError:
            return None
        return record if len(sha256) == SHA256_CHARS and record.line() == line else None


def stamp_text(size: int, mtime_ns: int, ctime_ns: int, inode: int) -> str:
    """A record's line up to its sha256."""
    return f"{size} {mtime_ns} {ctime_ns} {inode} "
