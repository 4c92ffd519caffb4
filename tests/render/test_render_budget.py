"""The build's time for drawings is one budget for all its runs: drawings that each take
their whole per-drawing time cannot make a build take hours. Past the budget, the
drawings not yet rendered are said to be not rendered, with the reason on their sheets,
are not cached, and the next build draws them."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from conftest import svg_for
from reportgen.model.artifacts import Render, RenderSettings, sha256
from reportgen.pipeline.pipeline import build_site
from reportgen.pipeline.runner import ParallelRunner, Tuning
from reportgen.published.verify import verify_version
from reportgen.render import svg
from reportgen.render.render_cache import RenderCache, render_and_keep

SETTINGS = RenderSettings("test", 64, 256, 0.2, (40.0, 30.0))


def drawings(prefix: str, n: int) -> dict[str, bytes]:
    made = [svg_for(f"{prefix}-{i}").encode() for i in range(n)]
    return {sha256(d): d for d in made}


def slow_render(data: bytes, settings: RenderSettings) -> Render:
    time.sleep(0.3)  # past the per-drawing time, under the point where the worker is ended
    return Render(sha256(data), b"png", sha256(b"png"), None, None, ())


def test_two_runs_share_one_budget(monkeypatch, tmp_path: Path):
    # Workers forked from here run the slow renderer (the build's own come from a fork server).
    monkeypatch.setattr(svg, "worker_context", lambda: multiprocessing.get_context("fork"))
    monkeypatch.setattr(svg, "render_one", slow_render)
    budget = svg.RenderBudget(2.0)
    cache = RenderCache(tmp_path / "cache")
    first, second = drawings("a", 24), drawings("b", 24)
    started = time.monotonic()
    done = render_and_keep(first, SETTINGS, cache, processes=2, budget=budget, batch_max=1)
    done.update(render_and_keep(second, SETTINGS, cache, processes=2, budget=budget, batch_max=1))
    took = time.monotonic() - started
    # Without the build's budget: 48 drawings of 0.3 s on two workers (7.2 s), each run's
    # own bound being about 33 s; with it, 2 s and what starting and ending the workers takes.
    assert took < 6.0, took
    late = {sha for sha, r in done.items() if r.png is None}
    assert set(second) <= late  # the second run found the build's time spent
    note = "not rendered: the build's time for drawings ran out (2 s for all its drawings); the next build draws it"
    assert all(done[sha].notes == (note,) for sha in late)
    assert all(cache.get(sha, SETTINGS, lambda: (first | second)[sha]) is None for sha in late)


def test_a_spent_budget_starts_no_worker(monkeypatch):
    def no_pool() -> None:
        raise AssertionError("a worker was started")

    monkeypatch.setattr(svg, "worker_context", no_pool)
    spent = svg.RenderBudget(0.0)
    done = svg.render_all(drawings("c", 3), SETTINGS, budget=spent)
    assert all(r.png is None and r.notes[-1].startswith(svg.BUILD_OUT_OF_TIME) for r in done.values())


@pytest.mark.slow
def test_a_build_past_its_render_budget_says_so_on_the_sheets(make_source, tmp_path: Path):
    source, out, cache = make_source(), tmp_path / "site", tmp_path / "cache"
    summary = build_site(source, out, cache=cache, runner=ParallelRunner(Tuning(render_seconds=0.0)))
    assert summary.n_render_failures == summary.n_drawings > 0
    assert verify_version(out / "v1").ok
    published = b"".join(p.read_bytes() for p in (out / "v1").rglob("*.html"))
    assert b"the build&#39;s time for drawings ran out" in published or b"the build's time for drawings ran out" in published
    again = build_site(source, out, version="v2", cache=cache)  # the next build draws them
    assert again.n_render_failures == 0
