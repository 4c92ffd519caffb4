"""Errors a user can act on: a full disk, a read-only site folder, an unreadable input
file and an unwritable cache end in one line naming the path and what to do (exit 1,
no traceback), or, for the optional cache, in a warning; a full disk leaves nothing
that ``prune`` would not remove."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from reportgen.published.verify import verify_version
from reportgen.write import version as version_module


DISK_KB = 160  # less than the small source's site (some 600 kB), more than its first files


def one_line_error(output: str) -> str:
    errors = [line for line in output.splitlines() if line.startswith(("error:", "internal error:"))]
    assert len(errors) == 1, output
    assert "Traceback" not in output and "internal error" not in output, output
    return errors[0]


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A small file system of its own (mounting needs root); skipped where it cannot be made."""
    folder = tmp_path / "disk"
    folder.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_KB}k", "tmpfs", str(folder)],
                          capture_output=True)
    if made.returncode != 0:
        pytest.skip("a tmpfs cannot be mounted here")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_full_disk_is_one_line_and_leaves_nothing_unlisted(make_source, tmpfs, run_cli):
    out = tmpfs / "site"
    result = run_cli("build", make_source(), "--out", out, "-q")
    assert result.exit_code == 1
    line = one_line_error(result.output)
    assert "No space left on device" in line and "the disk is full" in line and "reportgen prune" in line
    assert str(tmpfs) in line
    assert not (out / "v1").exists()
    assert not list(out.glob(".v1.building-*"))
    pruned = run_cli("prune", out, "--yes")
    assert pruned.exit_code == 0, pruned.output
    assert "0 files and folders" in run_cli("prune", out).output


def test_a_full_disk_injected_while_pages_are_written(make_source, tmp_path, run_cli, monkeypatch):
    out = tmp_path / "site"
    real_write = os.write
    written = []

    def fill(fd: int, data) -> int:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if target.startswith(str(out)) and ".building-" in target:
            written.append(target)
            if len(written) > 3:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as os.write raises it: no path
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", fill)
    result = run_cli("build", make_source(), "--out", out, "-q")
    assert result.exit_code == 1
    line = one_line_error(result.output)
    assert "the disk is full" in line and ".v1.building-" in line  # the file it was writing
    assert not (out / "v1").exists() and not list(out.glob(".v1.building-*"))


def test_a_read_only_site_folder_is_refused_before_the_build_runs(make_source, tmpfs, run_cli):
    source, out = make_source(), tmpfs / "site"
    out.mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    result = run_cli("build", source, "--out", out)
    assert result.exit_code == 1
    line = one_line_error(result.output)
    assert str(out) in line and "Read-only file system" in line and "writable" in line
    assert "auditing" not in result.output  # refused before the expensive stages


def test_an_unreadable_input_file_names_it(make_source, tmp_path, run_cli, monkeypatch):
    source = make_source()
    unreadable = source / "experiments" / "mini" / "artifacts" / "X-1" / "image.svg"
    real_open = os.open

    def denying(path, flags, *args, **kwargs):
        if os.fspath(path).endswith(os.path.join("X-1", "image.svg")):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", denying)
    result = run_cli("build", source, "--out", tmp_path / "site", "--no-cache", "-q")
    assert result.exit_code == 1
    line = one_line_error(result.output)
    assert "X-1/image.svg" in line and "ermission denied" in line and "readable" in line
    assert str(unreadable) in line or "artifacts/X-1/image.svg" in line


def test_an_unwritable_cache_is_skipped_with_a_warning(make_source, tmp_path, tmpfs, run_cli, monkeypatch):
    cache = tmpfs / "cache"
    cache.mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    monkeypatch.setenv("REPORTGEN_CACHE", str(cache))
    out = tmp_path / "site"
    result = run_cli("build", make_source(), "--out", out)
    assert result.exit_code == 0, result.output
    assert f"warning: {cache}: the render cache cannot be written; building without it" in result.output
    assert verify_version(out / "v1").ok


def test_a_cache_that_fills_up_during_the_build_is_skipped_with_a_warning(make_source, tmp_path, tmpfs, run_cli,
                                                                        monkeypatch):
    cache = tmpfs / "cache"
    (tmpfs / "filler").write_bytes(b"\0" * (DISK_KB * 1024 - 8192))  # the cache's disk is all but full
    monkeypatch.setenv("REPORTGEN_CACHE", str(cache))
    out = tmp_path / "site"
    result = run_cli("build", make_source(), "--out", out)
    assert result.exit_code == 0, result.output
    assert "warning: renders were not kept for the next build" in result.output
    assert verify_version(out / "v1").ok
