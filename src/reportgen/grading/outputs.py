"""What the page shows of an item's output, made server-side: a drawing as the PNG of
the project's safe renderer (render workers with a time budget; the SVG itself never
reaches the browser), any other output as text to be escaped. Nothing here names the
artifact's file, the call or the service."""

from __future__ import annotations

import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from reportgen.grading.experiment import Experiment
from reportgen.load.artifacts import collect_artifacts
from reportgen.model.artifacts import CallArtifacts, Render
from reportgen.model.source import ValidatedRun
from reportgen.render.text_runs import response_file

MAX_TEXT_CHARS = 100_000


@dataclass(frozen=True)
class OutputView:
    kind: str  # "drawing", "text" or "none"
    text: str = ""  # the response, for "text" (escaped by the page)
    truncated: bool = False


class Outputs:
    """Each item's output, read when first asked for; each drawing rendered once."""

    def __init__(self, experiment: Experiment, key: dict[str, str]) -> None:
        self.experiment = experiment
        self.key = key
        self.calls = {call.call_id: call for call in experiment.calls}
        self._bundles: dict[str, CallArtifacts] = {}
        self._renders: dict[str, Render] = {}
        self._lock = threading.Lock()
        self._renderer = Renderer(experiment)

    def _bundle(self, item: str) -> CallArtifacts:
        call_id = self.key[item]
        if call_id not in self._bundles:
            e = self.experiment
            run = ValidatedRun(e.contract, e.folder, e.rel_folder, e.log, (self.calls[call_id],), {})
            found = collect_artifacts(run)
            self._bundles[call_id] = found.get(call_id) or CallArtifacts(call_id, ())
        return self._bundles[call_id]

    def view(self, item: str) -> OutputView:
        with self._lock:
            bundle = self._bundle(item)
        if bundle.first("svg") is not None:
            return OutputView("drawing")
        response = response_file(bundle)
        if response is None:
            return OutputView("none")
        text = response.data.decode("utf-8", "replace")
        return OutputView("text", text[:MAX_TEXT_CHARS], len(text) > MAX_TEXT_CHARS)

    def render(self, item: str) -> Render | None:
        """The item's drawing rendered (None when it has no drawing), once."""
        with self._lock:
            svg = self._bundle(item).first("svg")
            if svg is None:
                return None
            if svg.sha256 not in self._renders:
                self._renders[svg.sha256] = self._renderer.render(svg.sha256, svg.data)
            return self._renders[svg.sha256]

    def close(self) -> None:
        self._renderer.close()


class Renderer:
    """One render worker kept for the whole session (a page should not wait for a pool
    to start), with the build's limits: a time budget per drawing, a capped address
    space; a worker that dies or overruns is ended and the next drawing gets a new one."""

    def __init__(self, experiment: Experiment) -> None:
        self.experiment = experiment
        self.pool: ProcessPoolExecutor | None = None

    def render(self, sha: str, data: bytes) -> Render:
        from reportgen.render.svg import HARD_FACTOR, _init_worker, contract_render_settings, render_batch, \
            worker_context

        settings = contract_render_settings(self.experiment.contract)
        if self.pool is None:
            self.pool = ProcessPoolExecutor(1, mp_context=worker_context(), initializer=_init_worker)
        try:
            return self.pool.submit(render_batch, [(sha, data)], settings).result(
                timeout=settings.seconds * HARD_FACTOR + 30)[0]
        except (BrokenProcessPool, FuturesTimeout, OSError) as exc:
            self.close()
            return Render(sha, None, None, None, None,
                          (f"not rendered: the renderer crashed or ran out of time ({type(exc).__name__})",))

    def close(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None:
            for process in list(getattr(pool, "_processes", {}).values()):
                process.kill()
            pool.shutdown(wait=False, cancel_futures=True)
