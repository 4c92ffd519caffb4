"""What a user sees when a build meets a fault it cannot mend: a build that waits for
another says for whom even under -q; a full disk met by a forked page writer is one
line naming the file and what to do, exit 1, with the published site as it was."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import pytest

from reportgen.published.verify import verify_version
from reportgen.write.lock import LOCK_NAME
from test_site_lock import hold_lock


def published(out: Path) -> dict[str, bytes]:
    """Every file a reader is served (the store aside: new unlisted files are prune's)."""
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.relative_to(out).parts[0] != "store" and p.name != LOCK_NAME}


@pytest.mark.slow  # it waits 2 s for the build that holds the site
def test_a_quiet_build_that_waits_says_for_whom(make_source, tmp_path, run_cli, render_cache):
    source, out = make_source(), tmp_path / "site"
    holder = hold_lock(out, 2, tmp_path / "c")
    result = run_cli("build", source, "--out", out, "-q")
    holder.wait(timeout=30)
    assert result.exit_code == 0, result.output
    waits = [line for line in result.output.splitlines() if "waiting for the build" in line]
    assert waits == [f"  waiting for the build in process {holder.pid}, which is writing {out} "
                     f"(it holds {out / LOCK_NAME})"]
    assert verify_version(out / "v1").ok


def test_a_full_disk_in_a_forked_page_writer_is_one_line(make_source, tmp_path, run_cli, render_cache,
                                                         monkeypatch, capfd):
    source, out = make_source(), tmp_path / "site"
    assert run_cli("build", source, "--out", out, "-q").exit_code == 0
    before = published(out)
    build_pid, real_write = os.getpid(), os.write
    monkeypatch.setattr(os, "cpu_count", lambda: 3)  # pages are written by forked copies of the build

    def full_in_copies(fd: int, data) -> int:
        if os.getpid() != build_pid:
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                target = ""
            if ".v2.building-" in target:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as os.write raises it: no path
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full_in_copies)
    started = time.monotonic()
    result = run_cli("build", source, "--out", out, "--version", "v2", "-q")
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith(("error:", "internal error:"))]
    assert len(errors) == 1, result.output
    (line,) = errors
    assert "No space left on device" in line and "the disk is full" in line and "reportgen prune" in line
    assert f"{out}/.v2.building-" in line  # the file the copy was writing
    assert "page-writing process failed" not in line
    assert "Traceback" not in result.output + capfd.readouterr().err  # nor from the copies
    assert not (out / "v2").exists() and not list(out.glob(".v2.*"))
    assert published(out) == before
    assert verify_version(out / "v1").ok
    assert time.monotonic() - started < 60

