"""A step worked out in a forked copy of the build, beside the build itself: the one
place the build forks.

A rebuild after a few corrected grades finds every drawing in the render cache, so
its second core would sit idle while the build does steps that hand little back: the
audit (findings), saving what it read (records in the cache folder), the page of
changes since the previous version (a file of its own), and the pages themselves (see
``write.version.VersionWriter.run_tasks``). A copy made by fork already holds
everything such a step reads; it does the step and sends back the result, pickled,
through a pipe only the two processes hold (or, for a large result, an unnamed file:
see ``spill``). Whatever goes wrong in the copy (no fork on this system, an exception,
a crash, no room for the file) makes ``result`` None, and the build then does the step
itself, meeting and reporting the same problem as it always does.

The fork-before-threads rule lives here: a process forked while another of its threads
runs may inherit a lock that thread held (and Python 3.12 warns about it). So a copy is
made only while the build has one thread (``may_fork``); otherwise ``Forked`` starts
nothing and ``result`` is None: the build does the step itself. The render pool's
thread is started lazily, when an SVG is not in the render cache: a rebuild keeps its
steps apart, a first build (whose cores are busy rendering) does them in its own process.

A copy ends once it has sent its result, and ``result`` waits for that: a copy's memory
(the listing of a million calls' source: 2 GB) is gone before the build unpickles what it
sent. Through a pipe, though, the build takes the result as it is written, and holds it
pickled while the copy still holds all it made: at a million calls the listing's 260 MB
beside the copy's 1.8 GB. A step with a large result is given a folder (``spill``, the
cache's: on disk) where the copy writes it to an unnamed file, says so through the pipe
and ends; the build reads the file a frame at a time once the copy is gone. Should the
file not be made or written, the build does the step itself, as for any failed copy.
Unless the copy has more to do once its result is sent (``then``: saving what it
read, say, where the copy is small enough to be held a little longer): ``result`` then
hands the result back as soon as it is sent, and ``wait`` waits for the rest; a failure
there is the copy's own (whatever it saves is saved whole or not at all).
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
from pathlib import Path
from typing import IO, Generic, TypeVar

T = TypeVar("T")

CAN_FORK = hasattr(os, "fork")
_WRITTEN = b"w"  # what a copy says once its result is written whole to the file


def may_fork() -> bool:
    """Whether a copy may be forked now: the system can, and no other thread is running."""
    return CAN_FORK and threading.active_count() == 1


class Forked(Generic[T]):
    """``step()`` running in a forked copy of this process, then ``then()``. ``result``
    waits for the step's result and, without ``then``, for the copy to end; ``wait`` for
    the copy to end; ``stop`` ends it unwaited (a failed build leaves no copy behind). A
    step returns something other than None: None is what a failed copy gives. Not
    started (``result`` None at once) when ``may_fork`` says no. ``report``: a failing
    copy prints its traceback (for a step the build does not do again itself). ``spill``:
    a folder for the unnamed file a large result is written to (through the pipe when
    none can be made there)."""

    def __init__(self, step: Callable[[], T], report: bool = False,
                 then: Callable[[], object] | None = None, spill: Path | None = None) -> None:
        self.pid: int | None = None
        self.fd: int | None = None  # the pipe the result comes through, or the word that it is written
        self.spill: IO[bytes] | None = None  # the file it is written to (see the module's docstring)
        self.then = then is not None
        if not may_fork():
            return
        file = None
        if spill is not None:
            try:
                file = tempfile.TemporaryFile(dir=spill)
            except OSError:  # no room for one (or no such folder yet): through the pipe, then
                pass
        read, write = os.pipe()
        pid = os.fork()
        if pid:
            os.close(write)
            self.pid, self.fd, self.spill = pid, read, file
            return
        os.close(read)  # the copy: from here on, never return into the caller
        code = 1
        try:
            # Pickled a frame at a time as it is written, never whole in the copy (a
            # million calls' listing pickled was 260 MB more beside the listing itself).
            if file is None:
                with os.fdopen(write, "wb") as pipe:
                    pickle.dump(step(), pipe, protocol=pickle.HIGHEST_PROTOCOL)
            else:
                pickle.dump(step(), file, protocol=pickle.HIGHEST_PROTOCOL)
                file.flush()
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
        if self.fd is None:
            return None
        if self.spill is None:
            return self._piped()
        file, self.spill = self.spill, None
        try:
            written = self._written()
            if not self.then and self.wait() != 0:  # waited for either way: no copy left unreaped
                return None
            if not written:
                return None
            file.seek(0)
            # Our own copy's, in our own unnamed file, read a frame at a time (never held pickled whole).
            return pickle.load(file)
        except (OSError, pickle.UnpicklingError, EOFError, ValueError):
            return None
        finally:
            file.close()

    def _piped(self) -> T | None:
        assert self.fd is not None
        fd, self.fd = self.fd, None
        with os.fdopen(fd, "rb") as pipe:
            body = pipe.read()  # to the end: the copy closed the pipe, or ended
        if not self.then and self.wait() != 0:
            return None
        try:
            # Our own copy's, through our own pipe. Cut short (the copy ended while
            # writing), it does not load.
            return pickle.loads(body) if body else None
        except (pickle.UnpicklingError, EOFError, ValueError):
            return None

    def _written(self) -> bool:
        """Whether the copy wrote its result to the file whole: it says so, or ends
        without saying it."""
        if self.fd is None:
            return False
        fd, self.fd = self.fd, None
        try:
            return os.read(fd, len(_WRITTEN)) == _WRITTEN
        finally:
            os.close(fd)

    def close(self) -> None:
        """Wait for the copy to send its result (unread) and to end."""
        if self.spill is None:
            self.result()
        else:
            self._written()
            self.spill.close()
            self.spill = None
        self.wait()

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
