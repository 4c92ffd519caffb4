"""One writer per site at a time: builds at once wait for each other, so each version a
build reports as built is whole, a label is never silently replaced by another source,
and every label lands in versions.json and the index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from reportgen.published.verify import verify_version
from reportgen.write.lock import LOCK_NAME

# A build in the middle of writing v1: it holds the site and fills its temporary folder.
HOLD = ("import os, sys, time; from pathlib import Path; from reportgen.write.lock import SiteLock\n"
        "out = Path(sys.argv[1])\n"
        "with SiteLock(out):\n"
        "    live = out / f'.v1.building-{os.getpid()}-0000'; live.mkdir(); (live / 'index.html').write_text('x')\n"
        "    print('held', flush=True); time.sleep(float(sys.argv[2]))\n"
        "    assert (live / 'index.html').is_file(), 'a live build lost its files'\n")


def env(cache: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "REPORTGEN_CACHE": str(cache)}


def start_build(source: Path, out: Path, cache: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "reportgen.cli", "build", str(source), "--out", str(out), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(cache))


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    out, err = proc.communicate(timeout=600)
    return proc.returncode, out + err


def hold_lock(out: Path, seconds: float, cache: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(out), str(seconds)], stdout=subprocess.PIPE,
                            text=True, env=env(cache))
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def assert_verifies(folder: Path) -> None:
    report = verify_version(folder)
    assert report.ok, report.mismatches


def other_source(make_source, tmp_path: Path) -> Path:
    first = make_source()
    second = tmp_path / "second"
    first.rename(second)
    make_source(site='title = "Another report"\nversion = "v1"\n')
    return second


def test_two_builds_of_one_label_at_once_leave_a_whole_version(make_source, tmp_path):
    source, out = make_source(), tmp_path / "site"
    builds = [start_build(source, out, tmp_path / f"cache{i}") for i in range(2)]
    results = [finish(b) for b in builds]
    for code, text in results:
        assert code == 0, text
    assert sum("built " in text for _, text in results) >= 1
    assert_verifies(out / "v1")
    assert not list(out.glob(".v1.*"))


def test_a_build_never_removes_the_folder_another_build_is_writing(make_source, tmp_path):
    source, out = make_source(), tmp_path / "site"
    holder = hold_lock(out, 12, tmp_path / "c")
    build = start_build(source, out, tmp_path / "c")
    live = next(out.glob(".v1.building-*"))
    while holder.poll() is None:
        assert (live / "index.html").is_file(), "the second build removed a live build's folder"
        time.sleep(0.05)
    assert holder.returncode == 0
    code, text = finish(build)
    assert code == 0, text
    assert "waiting for the build in process" in text
    assert not live.exists()  # a leftover once its build is over: removed under the lock
    assert_verifies(out / "v1")


def test_the_same_label_from_two_sources_at_once_refuses_the_second(make_source, tmp_path):
    second = other_source(make_source, tmp_path)
    first, out = tmp_path / "source", tmp_path / "site"
    builds = [start_build(first, out, tmp_path / "c1"), start_build(second, out, tmp_path / "c2")]
    results = [finish(b) for b in builds]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 1], results
    refused = next(text for code, text in results if code == 1)
    assert "already published from another source" in refused and "--force" in refused
    assert_verifies(out / "v1")
    titles = ["Another report", "Mini report"]  # of the first source and of the second
    winner = titles[[code for code, _ in results].index(0)]
    assert json.loads((out / "versions.json").read_text())[0]["title"] == winner


@pytest.mark.slow
def test_sixteen_labels_at_once_all_land(make_source, tmp_path):
    source, out = make_source(), tmp_path / "site"
    labels = [f"v{i}" for i in range(1, 17)]
    builds = [start_build(source, out, tmp_path / "cache", "--version", label, "-q") for label in labels]
    for build in builds:
        code, text = finish(build)
        assert code == 0, text
    listed = {e["version"] for e in json.loads((out / "versions.json").read_text())}
    assert listed == set(labels)
    index = (out / "index.html").read_text()
    for label in labels:
        assert f'href="{label}/' in index
        assert_verifies(out / label)


def test_a_build_waits_for_the_one_that_holds_the_site_and_says_for_whom(make_source, tmp_path, run_cli):
    source, out = make_source(), tmp_path / "site"
    holder = hold_lock(out, 3, tmp_path / "c")
    started = time.monotonic()
    result = run_cli("build", source, "--out", out)
    holder.wait(timeout=30)
    assert result.exit_code == 0, result.output
    assert f"waiting for the build in process {holder.pid}, which is writing {out}" in result.output
    assert time.monotonic() - started >= 2
    assert_verifies(out / "v1")


def test_the_lock_file_stays_empty_and_a_failed_first_build_leaves_no_site(make_source, tmp_path, run_cli):
    out = tmp_path / "site"
    assert run_cli("build", make_source(), "--out", out, "-q").exit_code == 0
    assert (out / LOCK_NAME).read_text() == ""  # a killed build leaves nothing in it either
    broken = make_source(log_text="run_id\n")
    assert run_cli("build", broken, "--out", tmp_path / "other", "-q").exit_code == 1
    assert not (tmp_path / "other").exists()
