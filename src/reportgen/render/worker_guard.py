"""Render processes that end with the build: imported first by the render workers' server
process (forkserver), and called by each worker as it starts.

On Linux the kernel kills a process whose parent ends if it asked to (PR_SET_PDEATHSIG):
the server asks it of the build's thread that started it, each worker of the server, so
a build that is killed (SIGKILL, out of memory) leaves neither behind. Elsewhere this
does nothing, and the workers end when they next find their queue closed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

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


end_with_parent()  # the server process imports this module first (see svg.worker_context)
