"""A hostile drawing is that drawing's "not renderable", never its batch's: an SVG nested
50,000 <g> deep among ordinary ones, and a drawing whose render raises, fail alone, and
their neighbours' renders are what the cache keeps."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import ROOT, svg_for
from reportgen.model.artifacts import RenderSettings, sha256
from reportgen.published.verify import verify_version
from reportgen.render import svg
from reportgen.render.render_cache import RenderCache, render_and_keep
from reportgen.render.svg import render_batch

SETTINGS = RenderSettings("test", 64, 256, 10.0, (40.0, 30.0))
DEEP = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 30">' + b"<g>" * 50_000
        + b'<circle cx="20" cy="15" r="9"/>' + b"</g>" * 50_000 + b"</svg>")


def ordinary(n: int) -> list[tuple[str, bytes]]:
    drawings = [svg_for(f"call-{i}").encode() for i in range(n)]
    return [(sha256(d), d) for d in drawings]


def test_a_deeply_nested_svg_fails_alone_in_its_batch():
    items = ordinary(5)
    items.insert(2, (sha256(DEEP), DEEP))
    renders = render_batch(items, SETTINGS)
    assert [r.svg_sha256 for r in renders] == [sha for sha, _ in items]
    deep = renders[2]
    assert deep.png is None and "nested more than" in deep.notes[-1]
    assert all(r.png is not None for i, r in enumerate(renders) if i != 2)


def test_a_drawing_whose_render_raises_fails_alone(monkeypatch):
    items = ordinary(4)
    real = svg.render_one

    def raising(data: bytes, settings: RenderSettings):
        if data == items[1][1]:
            raise RecursionError("maximum recursion depth exceeded")
        return real(data, settings)

    monkeypatch.setattr(svg, "render_one", raising)
    renders = render_batch(items, SETTINGS)
    assert renders[1].png is None and "too deeply" in renders[1].notes[-1]
    assert all(r.png is not None for i, r in enumerate(renders) if i != 1)


def test_the_cache_keeps_the_neighbours_renders_not_a_batch_failure(tmp_path: Path):
    items = dict(ordinary(40))
    items[sha256(DEEP)] = DEEP
    cache = RenderCache(tmp_path / "cache")
    renders = render_and_keep(items, SETTINGS, cache, processes=2)
    failed = [sha for sha, r in renders.items() if r.png is None]
    assert failed == [sha256(DEEP)]
    again = RenderCache(tmp_path / "cache")
    for sha in items:
        kept = again.get(sha, SETTINGS, lambda: items[sha])
        assert kept is not None and (kept.png is None) == (sha == sha256(DEEP))


def test_a_build_with_a_deeply_nested_drawing_publishes_the_rest(make_source, tmp_path, run_cli):
    source = make_source()
    folder = source / "experiments" / "mini" / "artifacts" / "X-2"
    (folder / "image.svg").write_bytes(DEEP)
    (folder / "response.txt").write_text("Here you go:\n```svg\n" + DEEP.decode() + "\n```\n")
    out = tmp_path / "site"
    result = run_cli("build", source, "--out", out, "-q")
    assert result.exit_code == 0, result.output
    assert "1 not renderable" in result.output
    assert verify_version(out / "v1").ok


STUCK = """
import signal, sys, time
from reportgen.model.artifacts import RenderSettings
from reportgen.render import svg

def stuck_in_c(data, settings):  # as cairo inside its C code: the budget's alarm cannot reach it
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(120)

svg.render_one = stuck_in_c
svg._WORKER["in"] = True  # as in a render worker
svg._render_alone("sha", b"<svg/>", RenderSettings("test", 64, 256, 1.0, (40.0, 30.0)))
print("returned")
"""


def test_a_render_stuck_past_the_hard_limit_ends_its_worker():
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", STUCK], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert done.returncode == -signal.SIGKILL, done.stdout + done.stderr
    assert time.monotonic() - started < 30
    assert "returned" not in done.stdout


def test_drawings_past_the_build_bound_are_said_and_not_cached(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(svg, "RENDERS_SECONDS", 0.0)  # the bound, reached at once
    items = dict(ordinary(4))
    cache = RenderCache(tmp_path / "cache")
    renders = render_and_keep(items, SETTINGS, cache, processes=1)
    late = {sha for sha, r in renders.items() if r.png is None}
    assert late and all(renders[sha].notes[-1].startswith(svg.OUT_OF_TIME) for sha in late)
    assert all(RenderCache(tmp_path / "cache").get(sha, SETTINGS, lambda: items[sha]) is None for sha in late)
