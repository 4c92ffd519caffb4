"""Failures a build must report as what they are: an oversized log is refused before
any step reads it, and a render pool that cannot start fails the build by name."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from conftest import ROOT

SCRIPT_WITHOUT_MAIN_GUARD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from reportgen.pipeline.pipeline import build_site
    build_site(Path(sys.argv[1]), Path(sys.argv[2]))
""")


def run_python(args, **kwargs):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "REPORTGEN_CACHE": kwargs.pop("cache")}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=300, **kwargs)


def test_an_oversized_log_is_refused_before_it_is_read(make_source, tmp_path):
    source = make_source()
    log = source / "experiments/mini/calls.csv"
    os.truncate(log, 2 * 2**30)  # a sparse 2 GiB file: costs no disk, but reading it costs 2 GB
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "REPORTGEN_CACHE": str(tmp_path / "cache")}
    build = subprocess.Popen([sys.executable, "-m", "reportgen.cli", "build", str(source), "--out", str(tmp_path / "site")],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    output = build.stdout.read().decode() if build.stdout else ""
    # This build's own peak (wait4 reports the one child waited for; RUSAGE_CHILDREN would
    # report the largest of every child this test process has reaped, an earlier test's too).
    _, status, usage = os.wait4(build.pid, 0)
    build.returncode = os.waitstatus_to_exitcode(status)
    assert build.returncode == 1, output
    assert "experiments/mini/calls.csv: is 2.0 GiB; logs up to 512 MiB are read" in output
    assert usage.ru_maxrss < 600 * 1024  # KiB: far below the file's size
    assert not (tmp_path / "site").exists()


def test_a_render_pool_that_cannot_start_fails_the_build(make_source, tmp_path):
    script = tmp_path / "build_it.py"
    script.write_text(SCRIPT_WITHOUT_MAIN_GUARD)
    out = tmp_path / "site"
    result = run_python([str(script), str(make_source()), str(out)], cwd=tmp_path, cache=str(tmp_path / "cache"))
    assert result.returncode != 0
    assert "RenderPoolError: the SVG renderer's worker processes could not start" in result.stderr
    assert "if __name__ == \"__main__\"" in result.stderr
    assert not (out / "v1").exists()
