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
    # The build reports its own peak as it exits: VmHWM belongs to the process's memory
    # since its exec (ru_maxrss would keep the high-water mark of the test process it was
    # forked from, hundreds of MB after a long test session).
    script = ("import atexit, sys\n"
              "def peak():\n"
              "    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
              "    print(f'peak-kib {hwm}', file=sys.stderr)\n"
              "atexit.register(peak)\n"
              "from reportgen.cli import main\n"
              "main(sys.argv[1:])\n")
    result = run_python(["-c", script, "build", str(source), "--out", str(tmp_path / "site")],
                        cache=str(tmp_path / "cache"))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "experiments/mini/calls.csv: is 2.0 GiB; logs up to 512 MiB are read" in result.stdout + result.stderr
    peak_kib = int(result.stderr.rsplit("peak-kib ", 1)[1].split()[0])
    assert peak_kib < 600 * 1024  # far below the file's size
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
