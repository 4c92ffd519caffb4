"""An executor of one thread that lives only while it has work: the build's render thread.

A copy of the build is forked only while the build has one thread (see ``fork``). A
thread pool keeps its idle thread to the end, so a first build, whose render thread
starts with its first drawing, forked nothing after it: at a million calls its drawings
were drawn by the time the log was parsed, and still the record of file hashes was saved
by the build itself (5 s of its one busy core while the other waited). This thread
ends once the jobs submitted to it are done; a later job starts another.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

T = TypeVar("T")


class ThreadWhileBusy(Executor):
    """Jobs run one at a time, in the order submitted, on a thread that ends once none
    is waiting (so that ``threading.active_count()`` is 1 again)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: deque[tuple[Future[Any], Callable[[], Any]]] = deque()
        self._thread: threading.Thread | None = None  # the thread at work, if any
        self._started: list[threading.Thread] = []  # every thread started: ``shutdown`` joins them
        self._closed = False

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot submit a job after shutdown")
            self._jobs.append((future, lambda: fn(*args, **kwargs)))
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="reportgen-renders", daemon=True)
                self._thread.start()
                self._started.append(self._thread)
        return future

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._jobs:
                    self._thread = None  # the next job starts a thread of its own
                    return
                future, job = self._jobs.popleft()
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while it waited
            try:
                future.set_result(job())
            except BaseException as exc:  # the job's failure is its future's, as in a thread pool
                future.set_exception(exc)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            if cancel_futures:
                while self._jobs:
                    self._jobs.popleft()[0].cancel()
            started, self._started = self._started, []
        if wait:
            for thread in started:  # one that has just let go of its work may still be ending
                thread.join()
