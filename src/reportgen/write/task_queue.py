"""The jobs of ``VersionWriter.run_tasks``, shared by the build and its forked helpers:
taken one at a time, in windows (see ``window_jobs``)."""

from __future__ import annotations

import multiprocessing
from typing import Callable, Sequence


def window_jobs(n: int, calls: int) -> int:
    """How many of ``n`` jobs a helper takes part in before it ends (see
    ``write.version.VersionWriter.run_tasks``), for a build of ``calls`` calls: a window
    for each CALLS_A_WINDOW calls, so that a helper holds copies of the pages of that
    many calls at most (a sixteenth of a million calls' sheets was 400 MB); and at least
    WINDOW_JOBS jobs (a window's last job may leave the other process idle).

    Not more windows than that: each one costs a fork, and after it the build copies
    again each page of its memory it writes to (a reference count it changes), its
    calls among them. A rebuild of 100,000 calls, whose jobs are cheap, spent 3.4 s of
    its 15 in the 53 windows of its sheets and pages when there were 32 for each; 0.3 s
    in one."""
    windows = min(MAX_WINDOWS, max(1, -(-calls // CALLS_A_WINDOW)))
    return max(WINDOW_JOBS, -(-n // windows))


WINDOW_JOBS = 32
CALLS_A_WINDOW = 31_250  # a thirty-second of a million
MAX_WINDOWS = 32


class TaskQueue:
    """Jobs taken one at a time, in order, by the processes that share them, up to
    ``end`` (the current window's): a counter in memory shared across fork (taking one
    costs about two microseconds; a page, a few hundred)."""

    def __init__(self, tasks: Sequence[Callable[[], None]]) -> None:
        self.tasks = tasks
        self.end = len(tasks)
        self.next = multiprocessing.Value("q", 0)

    def run(self) -> None:
        while True:
            with self.next.get_lock():
                i = self.next.value
                if i >= self.end:
                    return
                self.next.value = i + 1
            self.tasks[i]()

    def stop(self) -> None:
        with self.next.get_lock():
            self.next.value = len(self.tasks)
