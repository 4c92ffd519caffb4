"""The build's runners: the parallel one (every step a Tuning lets it do beside the build:
the listing, the audit, the charts, the steps handing nothing back, the page writers)
gives the very site the sequential one gives, for every design; the fork helper never
forks while another thread runs."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from reportgen.fork import Forked, may_fork
from reportgen.pipeline.pipeline import build_site
from reportgen.pipeline.runner import ParallelRunner, SequentialRunner, Tuning
from test_golden_designs import DESIGNS

# Every step apart, however small the source, and two page writers on any machine.
EVERYTHING_APART = Tuning(list_apart_bytes=1, audit_apart_calls=1, step_apart_size=1, chart_worker_calls=1,
                          processes=2)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_sequential_and_parallel_runners_build_the_same_site(design, make_source, tmp_path):
    rows, run_toml = DESIGNS[design]()
    source = make_source(rows, contract=run_toml)
    # Twice each: the second build of v2 lists the source by its record (apart, in parallel).
    for name, runner in (("sequential", SequentialRunner()), ("parallel", ParallelRunner(EVERYTHING_APART))):
        build_site(source, tmp_path / name, cache=tmp_path / f"cache-{name}", runner=runner)
        build_site(source, tmp_path / name, version="v2", cache=tmp_path / f"cache-{name}", runner=runner)
    sequential, parallel = _files(tmp_path / "sequential"), _files(tmp_path / "parallel")
    assert sequential.keys() == parallel.keys()
    assert [rel for rel in sequential if sequential[rel] != parallel[rel]] == []
    assert threading.active_count() == 1  # a build leaves no thread behind: the next one may fork


def test_a_build_forks_its_page_writers_only_once_its_render_thread_is_gone(make_source, tmp_path):
    """A build whose drawings are all new starts the render thread; by the time it writes
    pages the thread is gone, so the writers are forked (the site says nothing of it, but
    the rule does: may_fork is true again after the build)."""
    source = make_source()
    build_site(source, tmp_path / "site", cache=tmp_path / "cache", runner=ParallelRunner(EVERYTHING_APART))
    assert may_fork()


def test_no_copy_is_forked_while_another_thread_runs():
    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    worker.start()
    try:
        assert not may_fork()
        copy = Forked(lambda: "done apart")
        assert copy.pid is None and copy.result() is None  # the caller does the step itself
    finally:
        release.set()
        worker.join()
    assert Forked(lambda: "done apart").result() == "done apart"


def test_the_sequential_runner_starts_nothing_beside_the_build():
    runner = SequentialRunner()
    assert not any((runner.lists_apart(10**12), runner.audits_apart(10**9), runner.steps_apart(10**9),
                    runner.charts_apart(10**9)))
    assert runner.processes == 1
    job = runner.render_thread().submit(lambda: threading.get_ident())
    assert job.result() == threading.get_ident()  # done here, at once


def test_the_parallel_runner_follows_its_tuning():
    runner = ParallelRunner(Tuning(list_apart_bytes=100, audit_apart_calls=10, audit_apart_max_calls=20,
                                   step_apart_size=5, chart_worker_calls=7, processes=3))
    assert [runner.lists_apart(99), runner.lists_apart(100)] == [False, True]
    saves = ParallelRunner(Tuning(save_after_listing_bytes=100))
    assert [saves.saves_after_listing(99), saves.saves_after_listing(100)] == [True, False]
    assert not SequentialRunner().saves_after_listing(0)
    # Audited apart from 10 calls, and below 20: a larger run's copy would hold a copy of each call it walks.
    assert [runner.audits_apart(9), runner.audits_apart(10), runner.audits_apart(19), runner.audits_apart(20)] == [
        False, True, True, False]
    default = ParallelRunner()
    assert default.audits_apart(100_000) and not default.audits_apart(1_000_000)
    assert [runner.steps_apart(4), runner.steps_apart(5)] == [False, True]
    assert [runner.charts_apart(6), runner.charts_apart(7)] == [False, True]
    assert runner.processes == 3


def test_a_step_apart_is_done_again_here_when_its_copy_fails_unless_optional(tmp_path):
    import contextlib
    import os

    from reportgen.pipeline.runner import start_apart

    parent = os.getpid()
    done: list[str] = []

    def step() -> None:
        if os.getpid() != parent:
            raise RuntimeError("the copy fails")
        done.append("here")

    runner = ParallelRunner(EVERYTHING_APART)
    with contextlib.ExitStack() as copies:
        start_apart(runner, copies, step, 1)()
        assert done == ["here"]  # a step the build needs is done again by the build
        let_go: list[str] = []
        start_apart(runner, copies, step, 1, optional=lambda: let_go.append("dropped"))()
        assert let_go == ["dropped"] and done == ["here"]  # an optional one is not


def test_the_record_of_files_saved_apart_is_let_go_of_by_the_build(make_source, tmp_path, monkeypatch):
    import contextlib
    import gc
    import weakref

    from reportgen.load import contents
    from reportgen.pipeline.incremental import load_file_hashes
    from reportgen.pipeline.source_reading import SourceReading

    monkeypatch.setattr(contents, "RACY_SECONDS", -60.0)  # files written by the test count as settled
    source, cache = make_source(), tmp_path / "cache"
    with contextlib.ExitStack() as copies:
        reading = SourceReading(source, cache, copies, None, ParallelRunner(EVERYTHING_APART))
        assert reading.snapshot() is not None
        hashes = reading.hashes
        assert hashes is not None
        record, saved = weakref.ref(hashes), len(hashes)
        del hashes
        finish = reading.saving()
        gc.collect()
        assert reading.hashes is None and record() is None  # the copy saves it; the build holds none
        finish()
    again = load_file_hashes(cache, source)
    assert again is not None and saved > 0 and again.ahead is not None and sum(1 for _ in again.ahead) == saved


def _record_of_a_first_reading(source: Path, cache: Path) -> Path:
    """The record of ``source``'s files a first build leaves (read here: none to list apart)."""
    import contextlib

    from reportgen.pipeline.incremental import _hashes_path
    from reportgen.pipeline.source_reading import SourceReading

    with contextlib.ExitStack() as copies:
        first = SourceReading(source, cache, copies, None, ParallelRunner(EVERYTHING_APART))
        assert first.snapshot() is not None and first.copy is None
        first.saving()()
    return _hashes_path(cache, source)


def test_a_first_build_s_copies_write_what_they_read_to_its_cache_made_for_them(make_source, tmp_path, monkeypatch):
    """A first build's copies that read its files hand their bytes back through a file in
    the cache folder, made if it is not there yet (so that each copy ends once written,
    not once taken); the site is the one the build makes reading them itself."""
    import reportgen.pipeline.source_reading as source_reading

    spills = []
    real = source_reading.Forked

    def recording(step, report=False, then=None, spill=None):
        spills.append((spill, spill is not None and spill.is_dir()))  # there to write to, when given
        return real(step, report=report, then=then, spill=spill)

    monkeypatch.setattr(source_reading, "Forked", recording)
    source, cache = make_source(), tmp_path / "not" / "yet" / "a cache"
    build_site(source, tmp_path / "apart", cache=cache, runner=ParallelRunner(EVERYTHING_APART))
    assert (cache, True) in spills and all(spill in ((None, False), (cache, True)) for spill in spills)
    build_site(source, tmp_path / "alone", cache=tmp_path / "other", runner=SequentialRunner())
    assert _files(tmp_path / "apart" / "v1") == _files(tmp_path / "alone" / "v1")


def test_a_large_source_listed_apart_has_its_record_saved_before_the_listing_comes(make_source, tmp_path,
                                                                                   monkeypatch):
    """Past ``save_after_listing_bytes``, the copy that lists a rebuild's source saves the
    record first and ends as it sends the listing: the build never holds the listing
    beside a copy still holding the record."""
    import contextlib
    import dataclasses

    from reportgen.load import contents
    from reportgen.pipeline.source_reading import SourceReading

    monkeypatch.setattr(contents, "RACY_SECONDS", -60.0)  # files written by the test count as settled
    source, cache = make_source(), tmp_path / "cache"
    record = _record_of_a_first_reading(source, cache)
    before = record.stat().st_ino
    saves_first = dataclasses.replace(EVERYTHING_APART, save_after_listing_bytes=record.stat().st_size)
    with contextlib.ExitStack() as copies:
        again = SourceReading(source, cache, copies, None, ParallelRunner(saves_first))
        copy = again.copy
        assert copy is not None and copy.pid is not None
        assert again.snapshot() is not None
        assert record.stat().st_ino != before  # saved anew (a file renamed over the old one)
        assert copy.pid is None  # the copy has ended and was reaped


def test_a_copy_that_saves_the_record_first_lets_go_of_it_before_sending_the_listing(make_source, tmp_path,
                                                                                      monkeypatch):
    """What the listing copy does (``_listed``), done here: the record saved, then let go
    of, so that it is not held while the listing is pickled and sent (150 MB at a million
    calls); the listing is the one the build would make itself."""
    import contextlib

    from reportgen.load import contents
    from reportgen.pipeline.source_reading import SourceReading

    monkeypatch.setattr(contents, "RACY_SECONDS", -60.0)
    source, cache = make_source(), tmp_path / "cache"
    record = _record_of_a_first_reading(source, cache)
    before = record.stat().st_ino
    with contextlib.ExitStack() as copies:
        reading = SourceReading(source, cache, copies, None, SequentialRunner())
        listed = reading._listed(save=True)
        assert reading.hashes is None and record.stat().st_ino != before
        assert listed is not None and listed.digest == reading.snapshot().digest


def test_a_smaller_source_listed_apart_comes_before_its_record_is_saved(make_source, tmp_path, monkeypatch):
    """Below ``save_after_listing_bytes``, the listing is sent first and the build goes on
    while the copy saves the record, which it waits for once the version is written
    (``saving``): the record saved is the one a copy that saves first leaves."""
    import contextlib
    import os
    import threading

    from reportgen.load import contents
    from reportgen.pipeline import incremental
    from reportgen.pipeline.source_reading import SourceReading

    monkeypatch.setattr(contents, "RACY_SECONDS", -60.0)  # files written by the test count as settled
    source, cache = make_source(), tmp_path / "cache"
    record = _record_of_a_first_reading(source, cache)
    first_record = record.read_bytes()
    read, write = os.pipe()  # the copy's save waits for a byte from the test
    real_save = incremental.save_file_hashes

    def held_save(*args):
        os.read(read, 1)
        return real_save(*args)

    monkeypatch.setattr("reportgen.pipeline.source_reading.save_file_hashes", held_save)
    before = record.stat().st_ino
    with contextlib.ExitStack() as copies:
        again = SourceReading(source, cache, copies, None, ParallelRunner(EVERYTHING_APART))
        copy = again.copy
        assert copy is not None and copy.pid is not None
        assert again.snapshot() is not None  # while the copy cannot have saved yet
        assert record.stat().st_ino == before and copy.pid is not None
        finish = again.saving()
        threading.Timer(0.05, os.write, (write, b"x")).start()
        finish()  # waits for the copy
        assert copy.pid is None
    assert record.stat().st_ino != before and record.read_bytes() == first_record
