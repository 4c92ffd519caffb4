"""The jobs of ``VersionWriter.run_tasks``, shared by the build and its forked helpers:
taken one at a time, in windows (see ``window_jobs``)."""

from __future__ import annotations

import multiprocessing
from typing import Callable, Sequence


def window_jobs(n: int) -> int:
    """How many jobs a helper takes part in before it ends (see
    ``write.version.VersionWriter.run_tasks``): a thirty-second of them, so that a helper
    holds copies of a thirty-second of the pages the jobs read (a sixteenth of a million
    calls' sheets was 400 MB), and at least WINDOW_JOBS (forking a build of a million
    calls copies its page tables, some tens of milliseconds; and a window's last job may
    leave the other process idle)."""
    return max(WINDOW_JOBS, -(-n // 32))


WINDOW_JOBS = 32


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
