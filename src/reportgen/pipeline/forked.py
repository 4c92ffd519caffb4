"""A step of the build worked out in a forked copy of it, beside the build itself.

A rebuild after a few corrected grades finds every drawing in the render cache, so
its second core would sit idle while the build does steps that hand little back: the
audit (findings), saving what it read (records in the cache folder), the page of
changes since the previous version (a file of its own). A copy made by fork already
holds everything such a step reads; it does the step and sends back the result,
pickled, through a pipe only the two processes hold. Whatever goes wrong in the copy
(no fork on this system, an exception, a crash) makes ``result`` None, and the build
then does the step itself, meeting and reporting the same problem as it always does.

A copy may go on after sending its result (``then``): saving what it read, say, while
the build goes on with the result. ``wait`` waits for that; a failure there is the
copy's own (whatever it saves is saved whole or not at all).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

CAN_FORK = hasattr(os, "fork")


class Forked(Generic[T]):
    """``step()`` running in a forked copy of this process, then ``then()``. ``result``
    waits for the step; ``wait`` for the copy to end; ``stop`` ends it unwaited (a failed
    build leaves no copy behind). A step returns something other than None: None is
    what a failed copy gives."""

    def __init__(self, step: Callable[[], T], then: Callable[[], object] | None = None) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid:
            os.close(write)
            self.pid: int | None = pid
            self.fd: int | None = read
            self.then = then is not None
            return
        os.close(read)  # the copy: from here on, never return into the caller
        code = 1
        try:
            body = pickle.dumps(step(), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write, "wb") as pipe:
                pipe.write(body)
            if then is not None:
                then()
            code = 0
        except BaseException:  # nothing said here: the build does the step itself, and reports it
            pass
        finally:
            os._exit(code)

    def result(self) -> T | None:
        """The step's result, or None when the copy failed (or was stopped)."""
        if self.fd is None:
            return None
        fd, self.fd = self.fd, None
        with os.fdopen(fd, "rb") as pipe:
            body = pipe.read()  # to the end: the copy closed the pipe, or ended
        if not self.then or not body:
            if self.wait() != 0:
                return None
        try:
            # Our own copy's, through our own pipe. Cut short (the copy ended while
            # writing), it does not load.
            return pickle.loads(body) if body else None
        except (pickle.UnpicklingError, EOFError, ValueError):
            return None

    def close(self) -> None:
        """Wait for the copy to send its result (unread) and to end."""
        self.result()
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


# Inputs (files, calls) from which a step that hands nothing back to the build (saving a
# record, writing the page of changes) is done by a forked copy beside it.
APART_FROM = 20_000


def start_apart(copies: contextlib.ExitStack, step: Callable[[], object], size: int) -> Callable[[], object]:
    """``step`` started in a forked copy of the build when the build is large enough for it
    to pay; the function that finishes it: waits for the copy, or does the step here when
    it was not started apart or the copy failed."""
    if size < APART_FROM or not CAN_FORK:
        return step
    copy = Forked(lambda: step() or True)
    copies.callback(copy.close)  # a failed build still waits for it: it writes files, never half of one

    def finish() -> None:
        if copy.result() is None:
            step()

    return finish
