"""A step worked out in a forked copy of the build, beside the build itself: the one
place the build forks.

A rebuild after a few corrected grades finds every drawing in the render cache, so
its second core would sit idle while the build does steps that hand little back: the
audit (findings), saving what it read (records in the cache folder), the page of
changes since the previous version (a file of its own), and the pages themselves (see
``write.version.VersionWriter.run_tasks``). A copy made by fork already holds
everything such a step reads; it does the step and hands back the result, pickled
into a temporary file only the two processes hold (unnamed: gone with them), and says
so through a pipe. Whatever goes wrong in the copy (no fork on this system, an
exception, a crash, no room for the file) makes ``result`` None, and the build then
does the step itself, meeting and reporting the same problem as it always does.

The fork-before-threads rule lives here: a process forked while another of its threads
runs may inherit a lock that thread held (and Python 3.12 warns about it). So a copy is
made only while the build has one thread (``may_fork``); otherwise ``Forked`` starts
nothing and ``result`` is None: the build does the step itself. The render pool's
thread is started lazily, when an SVG is not in the render cache: a rebuild keeps its
steps apart, a first build (whose cores are busy rendering) does them in its own process.

A copy ends once it has written its result, and ``result`` waits for that: a copy's
memory (the listing of a million calls' source: 2 GB) is gone before the build reads
what it wrote (through a pipe, the build had to take the result as it was written, and
held it pickled, 260 MB, beside the copy still holding the listing). Unless the copy
has more to do once its result is written (``then``: saving what it read, say, where
the copy is small enough to be held a little longer): ``result`` then hands the result
back as soon as it is written, and ``wait`` waits for the rest; a failure there is the
copy's own (whatever it saves is saved whole or not at all).
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable
from typing import IO, Generic, TypeVar

T = TypeVar("T")

CAN_FORK = hasattr(os, "fork")
_WRITTEN = b"w"  # what a copy says once its result is written whole


def may_fork() -> bool:
    """Whether a copy may be forked now: the system can, and no other thread is running."""
    return CAN_FORK and threading.active_count() == 1


class Forked(Generic[T]):
    """``step()`` running in a forked copy of this process, then ``then()``. ``result``
    waits for the step's result and, without ``then``, for the copy to end; ``wait`` for
    the copy to end; ``stop`` ends it unwaited (a failed build leaves no copy behind). A
    step returns something other than None: None is what a failed copy gives. Not
    started (``result`` None at once) when ``may_fork`` says no. ``report``: a failing
    copy prints its traceback (for a step the build does not do again itself)."""

    def __init__(self, step: Callable[[], T], report: bool = False,
                 then: Callable[[], object] | None = None) -> None:
        self.pid: int | None = None
        self.fd: int | None = None  # the pipe the copy says "written" through
        self.spill: IO[bytes] | None = None  # the file it writes its result to
        self.then = then is not None
        if not may_fork():
            return
        try:
            spill = tempfile.TemporaryFile()
        except OSError:  # no room for one: the build does the step itself
            return
        read, write = os.pipe()
        pid = os.fork()
        if pid:
            os.close(write)
            self.pid, self.fd, self.spill = pid, read, spill
            return
        os.close(read)  # the copy: from here on, never return into the caller
        code = 1
        try:
            # Pickled into the file a frame at a time, never whole in the copy (a million
            # calls' listing pickled was 260 MB more beside the listing itself).
            pickle.dump(step(), spill, protocol=pickle.HIGHEST_PROTOCOL)
            spill.flush()
            os.write(write, _WRITTEN)  # only once it is whole: a result cut short is never read
            if then is not None:
                then()
            code = 0
        except BaseException:  # unless asked, nothing said here: the build does the step itself, and reports it
            if report:
                traceback.print_exc()
                sys.stderr.flush()
        finally:
            os._exit(code)

    def result(self) -> T | None:
        """The step's result, or None when the copy failed (or was stopped)."""
        spill = self.spill
        written = self._written()
        if not self.then and self.wait() != 0:
            written = False
        self.spill = None
        if spill is None:
            return None
        try:
            if not written:
                return None
            spill.seek(0)
            # Our own copy's, in our own unnamed file, read a frame at a time (never held pickled whole).
            return pickle.load(spill)
        except (OSError, pickle.UnpicklingError, EOFError, ValueError):
            return None
        finally:
            spill.close()

    def _written(self) -> bool:
        """Whether the copy wrote its result whole: it says so, or ends without saying it."""
        if self.fd is None:
            return False
        fd, self.fd = self.fd, None
        try:
            return os.read(fd, len(_WRITTEN)) == _WRITTEN
        finally:
            os.close(fd)

    def close(self) -> None:
        """Wait for the copy to write its result (unread) and to end."""
        self._written()
        self.wait()
        if self.spill is not None:
            self.spill.close()
            self.spill = None

    def wait(self) -> int | None:
        """The copy's exit status, once it has ended (None when it was already reaped)."""
        if self.pid is None:
            return None
        pid, self.pid = self.pid, None
        return os.waitpid(pid, 0)[1]

    def stop(self) -> None:
        if self.pid is not None:
            pid, self.pid = self.pid, None
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
        if self.fd is not None:
            fd, self.fd = self.fd, None
            try:
                os.close(fd)
            except OSError:
                pass
        if self.spill is not None:
            self.spill.close()
            self.spill = None
