"""Render processes end with the build: after a SIGKILL of the build while a slow drawing
is being rendered, its render server (forkserver) and workers are gone within seconds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

# Some 100,000 points: cairo spends far longer in C than the render budget on it.
SLOW = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 30"><polygon stroke="black" '
        'stroke-width="0.3" stroke-dasharray="0.1" fill="none" points="'
        + " ".join(f"{(i * 7919) % 4000 / 100:.2f},{(i * 104729) % 3000 / 100:.2f}" for i in range(100_000))
        + '"/></svg>')


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_build_leaves_no_render_process(make_source, tmp_path):
    source = make_source()
    for call in ("X-1", "X-2", "Y-1"):
        (source / "experiments" / "mini" / "artifacts" / call / "image.svg").write_text(SLOW.replace("40 30", f"40 3{call[-1]}"))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "REPORTGEN_CACHE": str(tmp_path / "cache")}
    build = subprocess.Popen([sys.executable, "-m", "reportgen.cli", "build", str(source), "--out",
                              str(tmp_path / "site")], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            helpers = descendants(build.pid)
            if any(len(descendants(p)) > 0 for p in helpers):  # the server and its workers
                break
            time.sleep(0.2)
        else:
            pytest.fail("the build started no render workers")
        time.sleep(1)
        helpers = descendants(build.pid)
    finally:
        os.kill(build.pid, signal.SIGKILL)
        build.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(p) for p in helpers):
        time.sleep(0.2)
    left = [p for p in helpers if alive(p)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "render processes outlived the build"
