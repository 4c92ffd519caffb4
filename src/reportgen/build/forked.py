"""A step of the build worked out in a forked copy of it, beside the build itself.

A rebuild after a few corrected grades finds every drawing in the render cache, so
its second core would sit idle while the build does steps that hand little back: the
audit (findings), saving what it read (records in the cache folder), the page of
changes since the previous version (a file of its own). A copy made by fork already
holds everything such a step reads; it does the step and sends back the result,
pickled, through a pipe only the two processes hold. Whatever goes wrong in the copy
(no fork on this system, an exception, a crash) makes ``result`` None, and the build
then does the step itself, meeting and reporting the same problem as it always does.
"""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

CAN_FORK = hasattr(os, "fork")


class Forked(Generic[T]):
    """``step()`` running in a forked copy of this process. ``result`` waits for it;
    ``stop`` ends it unwaited (a failed build leaves no copy behind). A step returns
    something other than None: None is what a failed copy gives."""

    def __init__(self, step: Callable[[], T]) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid:
            os.close(write)
            self.pid: int | None = pid
            self.fd = read
            return
        os.close(read)  # the copy: from here on, never return into the caller
        code = 1
        try:
            body = pickle.dumps(step(), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write, "wb") as pipe:
                pipe.write(body)
            code = 0
        except BaseException:  # nothing said here: the build does the step itself, and reports it
            pass
        finally:
            os._exit(code)

    def result(self) -> T | None:
        """The step's result, or None when the copy failed (or was stopped)."""
        if self.pid is None:
            return None
        pid, self.pid = self.pid, None
        with os.fdopen(self.fd, "rb") as pipe:
            body = pipe.read()
        _, status = os.waitpid(pid, 0)
        if status != 0 or not body:
            return None
        return pickle.loads(body)  # our own copy's, through our own pipe

    def stop(self) -> None:
        if self.pid is None:
            return
        pid, self.pid = self.pid, None
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
        try:
            os.close(self.fd)
        except OSError:
            pass
