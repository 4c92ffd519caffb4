"""Render processes that end with the build: imported first by the render workers' server
process (forkserver), and called by each worker as it starts.

The server watches its parent process and ends when it is gone: a build that is killed
(SIGKILL, out of memory) leaves no server behind. It does not ask the kernel for
PR_SET_PDEATHSIG, because that signal follows the *thread* that started the server: the
server would die with the build's render thread, and the next pool of a process that
builds twice (the API, the tests) would find it gone. Each worker, forked by the server's
own main thread, asks for PR_SET_PDEATHSIG on Linux and so ends with the server.
Elsewhere the workers end when they next find their queue closed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1


def end_with_parent() -> None:
    """Ask to be killed when the parent ends; end now if it already has."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - no usable libc
        return
    if os.getppid() != parent or parent == 1:  # it ended before the request: nothing will tell us
        os._exit(1)


def watch_parent(every: float = 0.5) -> None:
    """End this process when its parent has ended (checked every ``every`` seconds)."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(every)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="reportgen-parent-watch", daemon=True).start()


def _in_forkserver() -> bool:
    """Whether this module is being preloaded by multiprocessing's fork server (and not
    imported by a build, whose process must keep a single thread to fork safely)."""
    frame = sys._getframe()
    while frame is not None:
        code = frame.f_code
        if code.co_name == "main" and code.co_filename.endswith(os.path.join("multiprocessing", "forkserver.py")):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


if _in_forkserver():  # the server preloads this module first (see svg.worker_context)
    watch_parent()
