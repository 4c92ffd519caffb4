"""The background renders: each run's distinct SVGs drawn in worker processes
while the build validates, audits and analyses."""

from __future__ import annotations

import threading
from collections.abc import Collection
from concurrent.futures import Future
from pathlib import Path

from reportgen.pipeline.runner import Runner
from reportgen.progress import Progress
from reportgen.errors import Collector
from reportgen.load.artifacts import svg_files
from reportgen.load.contract import load_contract
from reportgen.model.artifacts import Artifact, CallArtifacts, Render, RenderSettings
from reportgen.model.source import RunFiles, ValidatedRun
from reportgen.render.render_cache import RenderCache, render_and_keep
from reportgen.render.svg import RenderBudget, contract_render_settings, render_settings


class BackgroundRenders:
    """Each run's distinct SVGs, rendered (or read from the cache) in a background thread
    that feeds the render workers; ``result`` waits for a run's renders. Leaving the
    ``with`` block early (a failed build) stops the workers."""

    def __init__(self, cache: RenderCache, progress: Progress, runner: Runner) -> None:
        self.cache = cache
        self.progress = progress
        self.pool = runner.render_thread()
        self.processes = runner.processes
        tuning = runner.render_tuning
        self.budget = RenderBudget(tuning.render_seconds)  # every run's drawings together
        self.batch_max = tuning.render_batch_max
        self.stop = threading.Event()
        # Per run: its renderer settings and the render jobs started for it, each with
        # the sha256 of the SVGs it renders.
        self.jobs: dict[str, tuple[RenderSettings, list[tuple[Collection[str], Future]]]] = {}
        self.needed: dict[str, set[str]] = {}

    def __enter__(self) -> "BackgroundRenders":
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:
            self.stop.set()
        self.pool.shutdown(wait=True, cancel_futures=True)

    def cancel(self) -> None:
        """Render no more: the build needs none of it (its version was up to date)."""
        self.stop.set()

    def start_early(self, source: Path, name: str, files: RunFiles) -> None:
        """Render the SVG files of experiment folder ``name`` from the moment they are
        read, while the rest of the source is read and the log validated, audited and
        analysed (a core would sit idle)."""
        contract = load_contract(source / "experiments" / name, f"experiments/{name}", Collector())
        svgs = svg_files(files)
        if contract is not None and svgs:
            self._submit(contract.id, contract_render_settings(contract), svgs)

    def start(self, run: ValidatedRun, artifacts: dict[str, CallArtifacts]) -> None:
        """The SVGs the run's calls need: those an early job is not already rendering."""
        settings = render_settings(run)
        svgs = _svgs(artifacts)
        run_id = run.contract.id
        self.needed[run_id] = set(svgs)
        if run_id in self.jobs and self.jobs[run_id][0] != settings:
            self.jobs.pop(run_id)
        started = {sha for job_svgs, _ in self.jobs.get(run_id, (settings, []))[1] for sha in job_svgs}
        missing = {sha: svg for sha, svg in svgs.items() if sha not in started}
        if missing or run_id not in self.jobs:
            self._submit(run_id, settings, missing)

    def _submit(self, run_id: str, settings: RenderSettings, svgs: dict[str, Artifact]) -> None:
        """``svgs``: by sha256."""
        # The cache is read here, not in the background thread: a thread that waits on
        # the disk gets the interpreter back only when the busy build lets go of it, some
        # milliseconds each time, thousands of times over. A kept render's notes are made
        # again from its SVG (the cache never decides what is published).
        hits: dict[str, Render] = {}
        for sha, svg in svgs.items():
            if (render := self.cache.get(sha, settings, lambda: svg.data)) is not None:
                hits[sha] = render
        missing = {sha: svg.data for sha, svg in svgs.items() if sha not in hits}
        found: Future = Future()
        found.set_result(hits)
        jobs = self.jobs.setdefault(run_id, (settings, []))[1]
        jobs.append((set(hits), found))
        if missing:
            self.progress.stage(f"rendering {len(missing)} distinct SVGs of {run_id} in the background")
            jobs.append((missing, self.pool.submit(render_and_keep, missing, settings, self.cache, self.processes,
                                                   stop=self.stop, budget=self.budget, batch_max=self.batch_max)))

    def result(self, run: ValidatedRun) -> tuple[RenderSettings, dict[str, Render]]:
        settings, jobs = self.jobs[run.contract.id]
        needed = self.needed[run.contract.id]
        drawn: dict[str, Render] = {}
        for _, job in jobs:
            drawn.update((sha, r) for sha, r in job.result().items() if sha in needed)
        return settings, drawn


def _svgs(artifacts: dict[str, CallArtifacts]) -> dict[str, Artifact]:
    return {a.sha256: a for bundle in artifacts.values() for a in bundle.files if a.kind == "svg"}
