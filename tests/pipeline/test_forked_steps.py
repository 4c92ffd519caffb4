"""Steps a large build hands to forked copies of itself (the audit, the listing of the
source folder and the record of its files, the page of changes since the previous
version): the same site and the same records as when the build does them itself, and
the build's own step (with its error) whenever a copy fails."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import reportgen.fork as fork
import reportgen.pipeline.audit_apart as audit_apart
import reportgen.pipeline.source_reading as source_reading
from reportgen.errors import AuditError
from reportgen.pipeline.pipeline import build_site
from reportgen.pipeline.runner import ParallelRunner, SequentialRunner, Tuning
from tests.conftest import default_rows

# One step apart at a time; the pages written by the build's process alone (their
# writers are forked copies too, which the counts below would see).
# The copy that reads the source ahead is left out: these count the others (it has tests of its own).
AUDIT_APART = ParallelRunner(Tuning(audit_apart_calls=1, processes=1, read_ahead=False))
LISTED_APART = ParallelRunner(Tuning(list_apart_bytes=1, processes=1, read_ahead=False))
STEPS_AND_LISTING_APART = ParallelRunner(Tuning(list_apart_bytes=1, step_apart_size=1, processes=1,
                                                read_ahead=False))


def _rows_with_findings():
    """Two identical outputs (an audit warning) beside the usual calls."""
    rows = default_rows()
    rows[1] = dict(rows[1], artifact_path=rows[0]["artifact_path"])
    return rows


def _forks_counted(monkeypatch, fail: bool = False) -> list[str]:
    """Each copy the build forks, as "listing" (the source listed apart), "reading" (half
    of the files a first build reads) or "step"; with ``fail``, every copy fails (the build
    then does the step itself)."""
    made: list[str] = []
    real = fork.Forked.__init__
    kinds = {"_listed": "listing", "_read_apart": "reading"}

    def counting(self, step, report=False, then=None, spill=None):
        made.append(kinds.get(getattr(getattr(step, "func", step), "__name__", ""), "step"))
        real(self, (lambda: 1 / 0) if fail else step, report, then, spill)

    monkeypatch.setattr(fork.Forked, "__init__", counting)
    return made


def _with_renders_of(cache, earlier):
    """``cache`` holding the renders of an earlier build (not what it found clean): a
    build that renders nothing starts no render thread, so its audit may be forked."""
    shutil.copytree(earlier, cache)
    shutil.rmtree(cache / "clean", ignore_errors=True)


def _files(folder):
    """Every file below ``folder``, by relative path, with its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("copy_fails", [False, True])
def test_a_run_audited_apart_gives_the_site_the_build_gives(make_source, tmp_path, monkeypatch, copy_fails):
    source = make_source(_rows_with_findings())
    alone = build_site(source, tmp_path / "alone", cache=tmp_path / "cache-alone")
    assert alone.n_warnings > 0  # the run has findings to send back
    _with_renders_of(tmp_path / "cache-apart", tmp_path / "cache-alone")
    forks = _forks_counted(monkeypatch)
    if copy_fails:  # in the copy only: the build's own audit is imported apart
        def broken(*_):
            raise OSError("the copy could not read a file")
        monkeypatch.setattr(audit_apart, "audit_with_artifacts", broken)
    apart = build_site(source, tmp_path / "apart", cache=tmp_path / "cache-apart", runner=AUDIT_APART)
    assert forks == ["step"]
    assert apart.n_warnings == alone.n_warnings and apart.n_claims == alone.n_claims
    alone_files, apart_files = _files(tmp_path / "alone" / "v1"), _files(tmp_path / "apart" / "v1")
    assert alone_files.keys() == apart_files.keys()
    assert [rel for rel in alone_files if alone_files[rel] != apart_files[rel]] == []
    # The contents found clean are remembered either way: the same list of them.
    assert sorted((tmp_path / "cache-apart" / "clean").glob("*.txt"))[0].read_text() == \
        sorted((tmp_path / "cache-alone" / "clean").glob("*.txt"))[0].read_text()


def test_a_credential_found_apart_stops_the_build(make_source, tmp_path, monkeypatch):
    source = make_source()
    response = source / "experiments/mini/artifacts/X-1/response.txt"
    response.write_text(response.read_text() + "key: sk-proj-" + "s" * 40 + "\n")
    with pytest.raises(AuditError, match="looks like an OpenAI-style API key"):
        build_site(source, tmp_path / "site", cache=tmp_path / "cache", runner=AUDIT_APART)
    assert not (tmp_path / "site" / "v1").exists()


def test_a_copy_still_at_work_is_stopped_when_the_build_fails(make_source, tmp_path, monkeypatch):
    import os

    source = make_source()
    build_site(source, tmp_path / "first", cache=tmp_path / "first-cache")
    _with_renders_of(tmp_path / "cache", tmp_path / "first-cache")
    started: list[int] = []
    real = fork.Forked.__init__

    def recorded(self, *args, **kwargs):
        real(self, *args, **kwargs)
        started.append(self.pid)

    monkeypatch.setattr(fork.Forked, "__init__", recorded)
    import reportgen.pipeline.stages as stages

    def failing(*_):
        raise RuntimeError("analysis failed")

    monkeypatch.setattr(stages, "analyze_run", failing)
    with pytest.raises(RuntimeError, match="analysis failed"):
        build_site(source, tmp_path / "site", cache=tmp_path / "cache", runner=AUDIT_APART)
    assert len(started) == 1 and started[0] is not None
    with pytest.raises(ChildProcessError):  # reaped: no copy is left behind
        os.waitpid(started[0], os.WNOHANG)


def _two_versions(make_source, out, cache, runner=None):
    """v1, then v2 (one grade corrected, previous = "v1") built beside it."""
    rows = default_rows()
    build_site(make_source(rows), out, cache=cache, runner=runner)
    rows[2] = dict(rows[2], qualified="true")
    source = make_source(rows, site='title = "Mini report"\nversion = "v2"\nprevious = "v1"\n')
    return build_site(source, out, cache=cache, runner=runner), source


@pytest.mark.parametrize("copy_fails", [False, True])
def test_the_changes_page_and_the_source_record_made_apart_are_those_the_build_makes(
        make_source, tmp_path, monkeypatch, copy_fails):
    import reportgen.load.contents as contents
    from reportgen.pipeline.incremental import _hashes_path

    monkeypatch.setattr(contents, "RACY_SECONDS", -60.0)  # files written by the test count as settled
    _two_versions(make_source, tmp_path / "alone", tmp_path / "cache-alone")
    made = _forks_counted(monkeypatch, fail=copy_fails)
    _, source = _two_versions(make_source, tmp_path / "apart", tmp_path / "cache-apart", STEPS_AND_LISTING_APART)
    # v1: half of its drawings and half of its other files read apart, the source record,
    # the changes page (none: no previous version). v2 has a record to list the folder by:
    # the listing (which saves the record) and the changes page; and when the listing
    # fails, the build lists the folder, reads half of what changed apart (the test's
    # source is written anew) and saves the record apart.
    again = ["reading", "reading", "step"] if copy_fails else []
    assert made == ["reading", "reading", "step", "step", "listing", *again, "step"]
    page = "diff/v1..v2/index.html"
    assert (tmp_path / "apart" / page).read_bytes() == (tmp_path / "alone" / page).read_bytes()
    assert [p.name for p in (tmp_path / "apart" / "diff" / "v1..v2").iterdir()] == ["index.html"]
    for version in ("v1", "v2"):
        assert _files(tmp_path / "apart" / version) == _files(tmp_path / "alone" / version)
    # The record of the source's files is there either way: the next build reads no file again.
    record = _hashes_path(tmp_path / "cache-apart", source).read_text()
    assert "calls.csv\t" in record and "image.svg\t" in record


@pytest.mark.parametrize("copy_fails", [False, True])
def test_a_bad_artifact_path_is_reported_alike_when_the_folder_is_listed_apart(
        make_source, tmp_path, monkeypatch, copy_fails):
    """The log is parsed while a copy lists the folder; its artifact paths are checked
    against the listing once it is back, and reported at their lines as ever."""
    from reportgen.errors import InputError

    source = make_source()
    build_site(source, tmp_path / "site", cache=tmp_path / "cache")  # leaves a record
    shutil.rmtree(source / "experiments/mini/artifacts/X-4")  # row 4, on line 5
    with pytest.raises(InputError) as alone:
        build_site(source, tmp_path / "fresh", cache=None)
    made = _forks_counted(monkeypatch, fail=copy_fails)
    with pytest.raises(InputError) as apart:
        build_site(source, tmp_path / "site", cache=tmp_path / "cache", runner=LISTED_APART)
    assert made == ["listing"]
    assert str(apart.value) == str(alone.value)
    assert str(apart.value) == ("experiments/mini/calls.csv:5: artifact_path: 'artifacts/X-4' does not exist "
                                "in the experiment folder")


def test_the_result_comes_once_the_copy_has_ended():
    """``result`` waits for the copy to end: its memory is gone before the build
    unpickles what it sent (the listing of a million calls: 2 GB in the copy)."""
    import os

    from reportgen.fork import Forked

    copy = Forked(lambda: {"listed": 3})
    pid = copy.pid
    assert pid is not None and copy.result() == {"listed": 3}
    with pytest.raises(ChildProcessError):  # ended and reaped
        os.waitpid(pid, os.WNOHANG)
    assert Forked(lambda: 1 / 0).result() is None


def test_a_copy_with_more_to_do_sends_its_result_first(tmp_path):
    """With ``then``, the result comes as soon as it is sent, and ``wait`` waits for the
    rest; a failure there is the copy's own (its exit status), not the result's."""
    import os

    from reportgen.fork import Forked

    read, write = os.pipe()
    done = tmp_path / "then"
    copy = Forked(lambda: {"listed": 3}, then=lambda: (os.read(read, 1), done.write_text("saved")))
    assert copy.result() == {"listed": 3}
    assert not done.exists()  # the copy is still waiting to go on
    os.write(write, b"x")
    assert copy.wait() == 0 and done.read_text() == "saved"
    failing = Forked(lambda: "sent", then=lambda: 1 / 0)
    assert failing.result() == "sent" and failing.wait() != 0


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="reads its peak memory from Linux's /proc")
def test_a_copy_never_holds_its_result_pickled_whole(tmp_path):
    """The copy pickles its result into the pipe as the build reads it: its peak memory
    grows by the result, not by the result and its pickle besides (a million calls'
    listing and its 200 MB pickle were held at once while the build read it)."""
    from reportgen.fork import Forked

    size = 64 << 20

    def kib(field: str) -> int:
        line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith(field + ":"))
        return int(line.split()[1])

    def step() -> bytes:
        Path("/proc/self/clear_refs").write_text("5")  # the copy's peak, counted from here
        (tmp_path / "start").write_text(str(kib("VmRSS")))
        return b"x" * size

    copy = Forked(step, then=lambda: (tmp_path / "peak").write_text(str(kib("VmHWM"))))
    sent = copy.result()
    assert sent is not None and len(sent) == size and sent.count(b"x") == size
    assert copy.wait() == 0
    grew = int((tmp_path / "peak").read_text()) - int((tmp_path / "start").read_text())
    assert 0.9 * size / 1024 < grew < 1.5 * size / 1024  # the result itself, once


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="reads its peak memory from Linux's /proc")
def test_the_build_reads_a_large_result_without_holding_it_pickled(tmp_path):
    """Given a folder, the copy writes its result to a file there and ends; the build then
    reads it a frame at a time: its memory grows by the result alone, not by the result
    and its pickle (taken from a pipe, it held both)."""
    from reportgen.fork import Forked

    size = 64 << 20

    def kib(field: str) -> int:
        line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith(field + ":"))
        return int(line.split()[1])

    copy = Forked(lambda: b"z" * size, spill=tmp_path)
    Path("/proc/self/clear_refs").write_text("5")  # this process's peak, counted from here
    start = kib("VmRSS")
    sent = copy.result()
    grew = kib("VmHWM") - start
    assert sent is not None and len(sent) == size and sent.count(b"z") == size
    assert 0.9 * size / 1024 < grew < 1.5 * size / 1024
    assert list(tmp_path.iterdir()) == []  # the file had no name


def test_a_copy_ends_once_its_large_result_is_written_read_or_not(tmp_path):
    """A copy given a folder does not wait for the build to read its result (a pipe holds
    it until the build reads it all, and with it the copy's whole memory): it writes it
    and ends."""
    import os
    import time

    from reportgen.fork import Forked

    copy = Forked(lambda: list(range(1_000_000)), spill=tmp_path)
    assert copy.pid is not None
    deadline = time.monotonic() + 60
    while os.waitid(os.P_PID, copy.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        assert time.monotonic() < deadline, "the copy waits for its result to be read"
        time.sleep(0.05)
    assert copy.result() == list(range(1_000_000))


def test_a_large_result_comes_through_the_pipe_without_room_for_its_file(tmp_path, monkeypatch):
    import reportgen.fork

    def no_room(**_):
        raise OSError(28, "No space left on device")

    assert reportgen.fork.Forked(lambda: "near", spill=tmp_path / "not yet made").result() == "near"
    monkeypatch.setattr(reportgen.fork.tempfile, "TemporaryFile", no_room)
    copy = reportgen.fork.Forked(lambda: {"sent": 1}, spill=tmp_path)
    assert copy.pid is not None and copy.result() == {"sent": 1}


def test_a_large_result_cut_short_or_a_copy_stopped_leaves_nothing(tmp_path):
    """A result not written whole is never read (None: the build does the step itself);
    a copy closed unread, or stopped, leaves no file and no process behind."""
    import os

    from reportgen.fork import Forked

    class Unpicklable:
        def __reduce__(self):
            raise TypeError("not this one")

    assert Forked(lambda: [b"y" * (1 << 20), Unpicklable()], spill=tmp_path).result() is None
    failed = Forked(lambda: 1 / 0, spill=tmp_path)
    failed_pid = failed.pid
    assert failed.result() is None
    with pytest.raises(ChildProcessError):  # reaped, not left a zombie
        os.waitpid(failed_pid, os.WNOHANG)
    then = Forked(lambda: [b"y" * (1 << 20), Unpicklable()], then=lambda: None, spill=tmp_path)
    assert then.result() is None and then.wait() != 0
    unread = Forked(lambda: b"x" * (1 << 20), spill=tmp_path)
    pid = unread.pid
    unread.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    stopped = Forked(lambda: __import__("time").sleep(60), spill=tmp_path)
    stopped.stop()
    assert stopped.result() is None and stopped.spill is None and list(tmp_path.iterdir()) == []


def test_a_result_that_fails_to_pickle_half_sent_is_none():
    """A result whose pickling fails after part of it went into the pipe does not load:
    ``result`` is None, and the build does the step itself."""
    from reportgen.fork import Forked

    class Unpicklable:
        def __reduce__(self):
            raise TypeError("not this one")

    assert Forked(lambda: [b"y" * (1 << 20), Unpicklable()]).result() is None
    with_then = Forked(lambda: [b"y" * (1 << 20), Unpicklable()], then=lambda: None)
    assert with_then.result() is None and with_then.wait() != 0


def test_the_source_record_is_saved_and_let_go_of_before_the_pages_are_written(make_source, tmp_path, monkeypatch):
    """When no copy saves the record (one process, or the render thread at work), the
    build saves it as soon as the source is loaded: held to the end, it was in every
    page writer's memory too."""
    import reportgen.load.contents as contents
    import reportgen.pipeline.stages as stages
    from reportgen.pipeline.incremental import _hashes_path
    from reportgen.pipeline.runner import SequentialRunner

    monkeypatch.setattr(contents, "RACY_SECONDS", -60.0)  # files written by the test count as settled
    source, seen = make_source(), []
    real = stages._write_version

    def writing(report, *args, **kwargs):
        record = _hashes_path(tmp_path / "cache", source)
        seen.append(record.read_text() if record.exists() else None)
        return real(report, *args, **kwargs)

    monkeypatch.setattr(stages, "_write_version", writing)
    build_site(source, tmp_path / "site", cache=tmp_path / "cache", runner=SequentialRunner())
    assert seen[0] is not None and "calls.csv\t" in seen[0] and "image.svg\t" in seen[0]
    assert _hashes_path(tmp_path / "cache", source).read_text() == seen[0]  # saved once, not again at the end


@pytest.mark.parametrize("drawn", [True, False])
def test_a_drawn_run_s_file_bytes_are_let_go_of_once_its_sheets_are_written(make_source, tmp_path, monkeypatch, drawn):
    """The sheets are the last to read a drawn run's files: what the listing kept of
    them is let go of before the pages (and their forked writers), and no page reads an
    artifact again; the log is read once more, for the one file that publishes it. A
    text run's pages quote each response's first line: its files stay."""
    import reportgen.load.contents as contents
    import reportgen.render.pages as pages
    from reportgen.pipeline.runner import SequentialRunner

    source = make_source()
    if not drawn:
        for svg in source.rglob("image.svg"):
            svg.unlink()
            (svg.parent / "response.txt").write_text("A plain answer.\n", encoding="utf-8")
    events: list[str] = []
    let_go, read, write_shared = contents.FileContents.let_go, contents.read_bytes, pages.write_shared
    monkeypatch.setattr(contents.FileContents, "let_go", lambda self: events.append("let go") or let_go(self))
    monkeypatch.setattr(contents, "read_bytes", lambda path: events.append(f"read {Path(path).name}") or read(path))
    monkeypatch.setattr(pages, "write_shared", lambda *a, **k: (write_shared(*a, **k), events.append("sheets"))[0])
    build_site(source, tmp_path / "site", cache=tmp_path / "cache", runner=SequentialRunner())
    assert events[events.index("sheets"):] == (["sheets", "let go", "read calls.csv"] if drawn else ["sheets"])


def test_the_files_that_read_every_call_are_written_before_the_page_writers_are_forked(make_source, tmp_path,
                                                                                     monkeypatch):
    """results.json (every claim's calls) and artifacts.json (every call's files) are
    written by the build itself before the pages are handed to forked writers, which
    would copy each page of memory they read; sheets and pages are written by them."""
    from reportgen.write.version import VersionWriter

    handed: list[tuple[list[str], int]] = []  # (files written so far, jobs handed out), at each hand-out
    real = VersionWriter.run_tasks

    def run_tasks(self, tasks):
        handed.append((sorted(self.hashes), len(tasks)))
        return real(self, tasks)

    monkeypatch.setattr(VersionWriter, "run_tasks", run_tasks)
    summary = build_site(make_source(), tmp_path / "site", cache=tmp_path / "cache",
                         runner=ParallelRunner(Tuning(processes=2)))
    (sheets_written, n_sheets), (before_pages, n_pages) = handed
    assert n_sheets >= 1 and n_pages >= 3
    assert "data/results.json" not in sheets_written
    run_data = [f for f in before_pages if f.startswith("data/") and f.endswith("/artifacts.json")]
    assert "data/results.json" in before_pages and len(run_data) == 1
    assert not any(f.endswith(".html") and not f.startswith("pages/") for f in before_pages)  # the pages come after
    assert (summary.folder / "data" / "results.json").is_file() and (summary.folder / run_data[0]).is_file()


def _read_ahead_copies(monkeypatch) -> list[tuple[bool, int | None]]:
    """(whether it reads the files' bytes, its pid) of each copy that reads the source ahead."""
    made: list[tuple[bool, int | None]] = []
    real = fork.Forked.__init__

    def recorded(self, step, report=False, then=None):
        real(self, step, report, then)
        if getattr(step, "func", None) is source_reading.read_ahead_behind:
            made.append((step.keywords.get("contents", step.args[1:2] == (True,)), self.pid))

    monkeypatch.setattr(fork.Forked, "__init__", recorded)
    return made


def test_the_source_is_read_ahead_by_a_copy_gone_once_the_build_has_read_it(make_source, tmp_path, monkeypatch):
    """A first build has every file read ahead, bytes and all; a rebuild, whose record
    spares it reading the files, only their metadata. The copy is reaped as soon as the
    build has the source (it waits for nothing it does), and the site is the same."""
    import os

    copies = _read_ahead_copies(monkeypatch)
    seen: list[tuple[bool, int | None]] = []  # the copy of each build, once it has the source
    real_snapshot = source_reading.SourceReading.snapshot

    def snapshot(self):
        first = not self.read
        done = real_snapshot(self)
        if first:  # the source read: the copy reaped by now, not a child of the build any more
            seen.append(copies[-1])
            with pytest.raises(ChildProcessError):
                os.waitpid(copies[-1][1], os.WNOHANG)
        return done

    monkeypatch.setattr(source_reading.SourceReading, "snapshot", snapshot)
    _two_versions(make_source, tmp_path / "site", tmp_path / "cache")
    assert [contents for contents, pid in copies if pid is not None] == [True, False]
    assert len(seen) == 2
    _two_versions(make_source, tmp_path / "alone", tmp_path / "cache-alone", SequentialRunner())
    for version in ("v1", "v2"):
        assert _files(tmp_path / "site" / version) == _files(tmp_path / "alone" / version)
    assert len(copies) == 2  # the sequential runner reads nothing ahead
