"""One writer per site at a time: a lock file in the site folder.

A build holds the site's lock from the moment it checks that its version is its to
write until the version is in place and versions.json lists it: the check, the removal
of what killed builds left, the commit and the index update are one step for any other
build. A second build waits for the first (saying which process it waits for), then
does its own check: the same label from the same source finds it up to date, from
another source it is refused, and a different label is added beside it. Waiting,
not refusing, because builds of different labels at once are ordinary (one per job of
a CI matrix) and each must land. ``prune`` never waits: it refuses while a build holds
the lock, since a running build's new store files are listed by no version yet.

The lock is an ``fcntl`` record lock on ``.reportgen.lock``: the system drops it when
the process that holds it ends, however it ends, so a killed build never leaves the
site locked; and, unlike ``flock``, the processes a build forks do not hold it after it.
The file says which process holds it (for the messages only).
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from reportgen.errors import ReportgenError

LOCK_NAME = ".reportgen.lock"


class SiteBusy(ReportgenError):
    pass


class SiteLock:
    """``with SiteLock(out, say):`` holds the site's lock, waiting for another build
    (``say`` is told once that it waits, and for whom); ``wait=False`` refuses instead."""

    def __init__(self, out: Path, say: Callable[[str], None] | None = None, wait: bool = True,
                 doing: str = "build") -> None:
        self.out = out
        self.path = out / LOCK_NAME
        self.say = say
        self.wait = wait
        self.doing = doing
        self.fd: int | None = None

    def __enter__(self) -> "SiteLock":
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        except OSError as exc:
            raise SiteBusy(f"{self.path}: cannot open the site's lock file ({exc.strerror}); "
                           "make the site folder writable, or choose another --out") from None
        try:
            self._take(fd)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {self.doing}\n".encode(), 0)
        return self

    def _take(self, fd: int) -> None:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
        holder = holder_of(self.path)
        if not self.wait:
            raise SiteBusy(f"{self.out}: {holder} is writing this site (it holds {self.path}); "
                           f"run this again once it has finished")
        if self.say is not None:
            self.say(f"waiting for {holder}, which is writing {self.out} (it holds {self.path})")
        fcntl.lockf(fd, fcntl.LOCK_EX)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            try:
                os.ftruncate(fd, 0)  # who held it is said only while held
            except OSError:
                pass
            os.close(fd)  # and the lock with it


def holder_of(path: Path) -> str:
    """Which process the lock file says holds it: "the build in process 1234"."""
    try:
        words = path.read_text("utf-8", errors="replace").split()
    except OSError:
        words = []
    if len(words) >= 2 and words[0].isdigit():
        return f"the {words[1]} in process {words[0]}"
    return "another build"
