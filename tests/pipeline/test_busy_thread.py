"""The render thread lives only while it has work: once its jobs are done the build has
one thread again, and may fork copies (see reportgen.fork)."""

from __future__ import annotations

import threading
import time

import pytest

from reportgen.fork import may_fork
from reportgen.pipeline.busy_thread import ThreadWhileBusy


def _one_thread_again(seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while threading.active_count() > 1 and time.monotonic() < deadline:
        time.sleep(0.005)
    return threading.active_count() == 1


def test_jobs_run_in_order_on_a_thread_that_ends_when_they_are_done():
    executor = ThreadWhileBusy()
    release = threading.Event()
    order: list[int] = []
    first = executor.submit(lambda: (release.wait(), order.append(1), threading.get_ident())[2])
    second = executor.submit(order.append, 2)
    assert threading.active_count() == 2 and not may_fork()  # at work: no copy may be forked
    release.set()
    assert first.result() != threading.get_ident() and second.result() is None
    assert order == [1, 2]
    assert _one_thread_again() and may_fork()
    # A later job starts a thread of its own.
    assert executor.submit(lambda: 6 * 7).result() == 42
    executor.shutdown(wait=True)
    assert threading.active_count() == 1


def test_a_failing_job_fails_its_future_only():
    executor = ThreadWhileBusy()
    failed = executor.submit(lambda: 1 / 0)
    after = executor.submit(lambda: "still run")
    with pytest.raises(ZeroDivisionError):
        failed.result()
    assert after.result() == "still run"
    executor.shutdown(wait=True)


def test_shutdown_cancels_the_jobs_waiting_and_refuses_new_ones():
    executor = ThreadWhileBusy()
    started, release = threading.Event(), threading.Event()
    running = executor.submit(lambda: (started.set(), release.wait())[1])
    waiting = executor.submit(lambda: "never")
    assert started.wait(10)
    executor.shutdown(wait=False, cancel_futures=True)  # while the first job still runs
    release.set()
    assert running.result() is True
    assert waiting.cancelled()
    assert _one_thread_again()
    with pytest.raises(RuntimeError):
        executor.submit(lambda: None)
