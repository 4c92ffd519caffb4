"""How the build spreads its work over the cores: one ``Runner``, sequential or parallel.

Every place where the build may work on more than one core asks its runner:

- the source folder read ahead of the build, from its far end, by a forked copy
  (``source_reading``);
- the listing of the source folder, by a forked copy, while the logs are parsed
  (``source_reading``);
- the audit of a large run (up to the size where the copy would double the memory), by
  a forked copy, while the run is analysed (``audit_apart``);
- steps that hand nothing back (saving records, the page of changes), by forked copies
  (``start_apart``);
- a large run's charts, drawn by a worker process (``stages``);
- the SVG renders, in worker processes fed by a background thread (``render_pool``);
- the pages, written by forked copies that share them (``write.version``).

Forked copies are made by ``reportgen.fork``, which owns the fork-before-threads rule.
``SequentialRunner`` does everything in the build's own process, in order: the
reference the parallel build's sites are compared against, byte for byte. The parallel
runner's thresholds are one ``Tuning``; tests pick a path by passing one.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import ParamSpec, Protocol, TypeVar

from reportgen.fork import Forked

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class Tuning:
    """Where parallel work starts to pay: below each size, starting a copy or a worker
    costs more than it saves."""

    # A record of the source's files from which the folder is listed apart: some 12,000
    # files (a record holds about 320 bytes a file).
    list_apart_bytes: int = 4_000_000
    # ... and up to which the copy sends the listing before it saves the record, so that
    # the build goes on meanwhile (0.45 s sooner at 100,000 calls, a record of 58 MB);
    # above it, the copy saves first and has ended by the time the build unpickles the
    # listing (at a million calls, a copy of 2 GB beside a listing of 0.9 GB).
    save_after_listing_bytes: int = 128_000_000
    audit_apart_calls: int = 20_000  # a run's calls from which it is audited apart
    # ... and up to which: a copy holds its own copy of every call it walks (CPython
    # writes each object's reference count as it is read), 2 KB a call: at a million
    # calls, 2.2 GB beside the build's 2.3 GB, to save some 30 s of a rebuild.
    audit_apart_max_calls: int = 250_000
    step_apart_size: int = 20_000  # files or calls from which a step handing nothing back is done apart
    chart_worker_calls: int = 20_000  # a source's calls from which charts are drawn by a worker
    processes: int | None = None  # page writers and SVG renderers; None: one per core
    render_seconds: float = 3600.0  # the build's time for all its drawings (past it: said, drawn next build)
    render_batch_max: int = 32  # SVGs handed to a render worker at a time, at most
    read_ahead: bool = True  # a forked copy reads the source from its far end (a process, whatever its size)


class Runner(Protocol):
    """Which work is done beside the build, and by how many processes."""

    def lists_apart(self, record_bytes: int) -> bool: ...

    def saves_after_listing(self, record_bytes: int) -> bool: ...

    def audits_apart(self, n_calls: int) -> bool: ...

    def steps_apart(self, size: int) -> bool: ...

    def charts_apart(self, n_calls: int) -> bool: ...

    def render_thread(self) -> Executor: ...

    @property
    def processes(self) -> int: ...

    @property
    def render_tuning(self) -> Tuning: ...  # the render budget and batch size

    @property
    def reads_ahead(self) -> bool: ...  # whether a forked copy reads the source ahead of the build


class ParallelRunner:
    """Work beside the build wherever its ``Tuning`` says it pays (the default runner)."""

    def __init__(self, tuning: Tuning = Tuning()) -> None:
        self.tuning = tuning

    def lists_apart(self, record_bytes: int) -> bool:
        return record_bytes >= self.tuning.list_apart_bytes

    def saves_after_listing(self, record_bytes: int) -> bool:
        return record_bytes < self.tuning.save_after_listing_bytes

    def audits_apart(self, n_calls: int) -> bool:
        return self.tuning.audit_apart_calls <= n_calls < self.tuning.audit_apart_max_calls

    def steps_apart(self, size: int) -> bool:
        return size >= self.tuning.step_apart_size

    def charts_apart(self, n_calls: int) -> bool:
        return n_calls >= self.tuning.chart_worker_calls

    def render_thread(self) -> Executor:
        return ThreadPoolExecutor(1)  # its thread starts with the first render the cache does not hold

    @property
    def processes(self) -> int:
        return self.tuning.processes or os.cpu_count() or 1

    @property
    def render_tuning(self) -> Tuning:
        return self.tuning

    @property
    def reads_ahead(self) -> bool:
        return self.tuning.read_ahead


class SequentialRunner:
    """Everything in the build's own process, in order (SVGs are still rendered in a
    worker process, one: a renderer crash must not take the build down)."""

    def lists_apart(self, record_bytes: int) -> bool:
        return False

    def saves_after_listing(self, record_bytes: int) -> bool:
        return False

    def audits_apart(self, n_calls: int) -> bool:
        return False

    def steps_apart(self, size: int) -> bool:
        return False

    def charts_apart(self, n_calls: int) -> bool:
        return False

    def render_thread(self) -> Executor:
        return _InPlace()

    @property
    def processes(self) -> int:
        return 1

    @property
    def render_tuning(self) -> Tuning:
        return Tuning(processes=1)

    @property
    def reads_ahead(self) -> bool:
        return False


class _InPlace(Executor):
    """An executor that does each job when it is submitted."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        done: Future[T] = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to whoever asks for the result, as a pool would
            done.set_exception(exc)
        return done


def start_apart(runner: Runner, copies: contextlib.ExitStack, step: Callable[[], object],
                size: int, optional: Callable[[], None] | None = None) -> Callable[[], object]:
    """``step`` started in a forked copy of the build when ``runner`` says it pays; the
    function that finishes it: waits for the copy, or does the step here when it was not
    started apart or the copy failed.

    ``optional``: for a step the build may go without (saving a record that only makes
    the next build faster), called once the copy runs it, so that the build lets go of
    what only the step reads; the step is then not done again here if the copy fails."""
    if not runner.steps_apart(size):
        return step
    copy = Forked(lambda: step() or True)
    copies.callback(copy.close)  # a failed build still waits for it: it writes files, never half of one
    let_go = optional if copy.pid is not None else None
    if let_go is not None:
        let_go()

    def finish() -> None:
        if copy.result() is None and let_go is None:
            step()

    return finish

