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

The lock is an ``fcntl`` record lock on ``.reportgen.lock``, an empty file: the system
drops it when the process that holds it ends, however it ends, so a killed build never
leaves the site locked; unlike ``flock``, the processes a build forks do not hold it
after it; and the system says which process holds it (for the messages).
"""

from __future__ import annotations

import errno
import fcntl
import multiprocessing
import os
import struct
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

    def __init__(self, out: Path, say: Callable[[str], None] | None = None, wait: bool = True) -> None:
        self.out = out
        self.path = out / LOCK_NAME
        self.say = say
        self.wait = wait
        self.fd: int | None = None
        self.made = False  # whether this build made the site folder

    def __enter__(self) -> "SiteLock":
        while True:
            self.made = not self.out.exists()
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
            if _same_file(fd, self.path):
                break
            os.close(fd)  # the build we waited for removed the folder it had made: again
        self.fd = fd
        return self

    def _take(self, fd: int) -> None:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
        holder = holder_of(fd)
        # A worker process that runs a build (a script without a main guard, run again as
        # the worker starts) would wait for ever for the build that started it: it refuses.
        if not self.wait or _in_worker():
            raise SiteBusy(f"{self.out}: a build in {holder} is writing this site (it holds {self.path}); "
                           f"run this again once it has finished")
        if self.say is not None:
            self.say(f"waiting for the build in {holder}, which is writing {self.out} (it holds {self.path})")
        fcntl.lockf(fd, fcntl.LOCK_EX)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            if self.made:  # a first build that wrote nothing leaves no site folder
                try:
                    if [p.name for p in self.out.iterdir()] == [LOCK_NAME]:
                        self.path.unlink()
                        self.out.rmdir()
                except OSError:
                    pass
            os.close(fd)  # and the lock with it


def _in_worker() -> bool:
    """Whether this is a process that multiprocessing started (or is starting)."""
    starting = getattr(multiprocessing.current_process(), "_inheriting", False)
    return bool(starting) or multiprocessing.parent_process() is not None


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def holder_of(fd: int) -> str:
    """Which process holds the lock on ``fd``'s file, as the system says: "process 1234"."""
    query = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
    try:
        kind, _, _, _, pid = struct.unpack(_FLOCK, fcntl.fcntl(fd, fcntl.F_GETLK, query))
    except (OSError, struct.error):
        return "another build"
    return f"process {pid}" if kind != fcntl.F_UNLCK and pid > 0 else "another build"


_FLOCK = "@hhqqi4x"  # struct flock: type, whence, start, length, pid (Linux, 64-bit offsets)
