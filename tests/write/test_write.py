"""Writing a version from several processes: every file in the manifest, or nothing."""

from __future__ import annotations

import hashlib
import json
import os
import time
from functools import partial

import pytest

from reportgen.write.version import PublishError, VersionWriter


def test_files_written_by_every_process_are_in_the_manifest(tmp_path):
    with VersionWriter(tmp_path, "v1") as writer:
        writer.run_tasks([partial(writer.add, f"calls/{i}.html", b"page %d" % i) for i in range(50)])
        folder = writer.commit()
    manifest = json.loads((folder / "manifest.json").read_text())["files"]
    assert manifest == {f"calls/{i}.html": "sha256:" + hashlib.sha256(b"page %d" % i).hexdigest()
                        for i in range(50)}
    assert all((folder / rel).read_bytes() == b"page %s" % rel[6:-5].encode() for rel in manifest)


def failing_task(writer: VersionWriter, build_pid: int, i: int) -> None:
    time.sleep(0.01)  # long enough that the helper takes some of the jobs
    if os.getpid() != build_pid:
        raise RuntimeError("disk on fire")
    writer.add(f"calls/{i}.html", b"page")


two_processes = pytest.mark.skipif(not hasattr(os, "fork") or (os.cpu_count() or 1) < 2, reason="one process only")


@two_processes
def test_a_failing_helper_publishes_nothing(tmp_path):
    with pytest.raises(PublishError, match="a page-writing process failed"):
        with VersionWriter(tmp_path, "v1") as writer:
            writer.run_tasks([partial(failing_task, writer, os.getpid(), i) for i in range(20)])
            writer.commit()
    assert list(tmp_path.iterdir()) == []


def task_failing_in_the_build(writer: VersionWriter, build_pid: int, i: int) -> None:
    time.sleep(0.01)
    if os.getpid() == build_pid and i > 5:
        raise RuntimeError("disk on fire")
    writer.add(f"calls/{i}.html", b"page")


@two_processes
def test_a_failing_build_stops_its_helpers_and_publishes_nothing(tmp_path):
    with pytest.raises(RuntimeError, match="disk on fire"):
        with VersionWriter(tmp_path, "v1") as writer:
            writer.run_tasks([partial(task_failing_in_the_build, writer, os.getpid(), i) for i in range(200)])
    assert list(tmp_path.iterdir()) == []


def timed_page(writer: VersionWriter, i: int, seconds: float) -> None:
    time.sleep(seconds)
    writer.add(f"calls/{i}.html", str(os.getpid()).encode())


@two_processes
def test_jobs_go_to_whichever_process_is_free(tmp_path):
    # One long job first, then many short ones: the process that took the long one
    # must not also be handed half of the rest.
    with VersionWriter(tmp_path, "v1") as writer:
        writer.run_tasks([partial(timed_page, writer, i, 0.6 if i == 0 else 0.01) for i in range(41)])
        folder = writer.commit()
    writers = [(folder / f"calls/{i}.html").read_text() for i in range(41)]
    assert len(set(writers)) >= 2  # both processes wrote pages (a helper each window)
    assert writers.count(writers[0]) < 10  # the long job's process wrote few of the rest


def test_a_site_is_readable_by_a_web_server_under_the_users_umask(make_source, tmp_path):
    """Every file and folder a build writes has the modes the umask gives (0644 and 0755
    under the usual 022), never a temporary file's 0600 or folder's 0700: a web server
    running as another user serves the site as it is copied."""
    from reportgen.pipeline.pipeline import build_site

    rows_source = make_source()
    before = os.umask(0o022)
    try:
        build_site(rows_source, tmp_path / "site", cache=tmp_path / "cache")
    finally:
        os.umask(before)
    site = tmp_path / "site"
    wrong = [(p.relative_to(site).as_posix(), oct(p.stat().st_mode & 0o777)) for p in [site, *site.rglob("*")]
             if (p.stat().st_mode & 0o777) != (0o755 if p.is_dir() else 0o644)]
    assert wrong == []


def page_by_pid(writer: VersionWriter, i: int) -> None:
    time.sleep(0.002)
    writer.add(f"calls/{i}.html", str(os.getpid()).encode())


@two_processes
def test_helpers_are_forked_anew_for_each_window_of_jobs(tmp_path, monkeypatch):
    """A helper ends after its window (the pages it copied from the build go with it),
    and no job is lost or done twice where one window meets the next."""
    import reportgen.write.task_queue as task_queue

    monkeypatch.setattr(task_queue, "WINDOW_JOBS", 10)
    million = 1_000_000
    assert [task_queue.window_jobs(95, million), task_queue.window_jobs(640, million),
            task_queue.window_jobs(3200, million)] == [10, 20, 100]  # 32 windows, of 10 jobs at least
    assert [task_queue.window_jobs(3200, calls) for calls in (0, 31_250, 31_251, 100_000, 10 * million)] == [
        3200, 3200, 1600, 800, 100]  # a window for each 31,250 calls, 32 at most
    with VersionWriter(tmp_path, "v1", calls=million) as writer:
        writer.run_tasks([partial(page_by_pid, writer, i) for i in range(95)])
        folder = writer.commit()
    manifest = json.loads((folder / "manifest.json").read_text())["files"]
    assert sorted(manifest) == sorted(f"calls/{i}.html" for i in range(95))
    pids = [(folder / f"calls/{i}.html").read_text() for i in range(95)]
    helpers = set(pids) - {str(os.getpid())}
    windows_with_a_helper = sum(1 for start in range(0, 95, 10) if set(pids[start:start + 10]) & helpers)
    assert len(helpers) == windows_with_a_helper > 1  # one helper per window it worked in, never across two
    for pid in helpers:
        window = {i // 10 for i, p in enumerate(pids) if p == pid}
        assert len(window) == 1
