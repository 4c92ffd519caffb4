"""Artifacts of each call: read, hashed, content-addressed, and SVG rendered safely.

Three artifacts per drawing call, each hashed, so a reader can see how one came from
the other: the raw response, the SVG (from the log's folder, or extracted from the
response), and the PNG this build rendered. Rendering runs in worker processes with a
time budget and bounded output size; CairoSVG only ever gets bytes we read ourselves
and a URL fetcher that refuses every file and URL (it decodes only embedded data:
images, within limits: see embedded_images).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures import TimeoutError as FuturesTimeout
from concurrent.futures.process import BrokenProcessPool
from xml.etree.ElementTree import Element

from reportgen.errors import ReportgenError
from reportgen.model.artifacts import Render, RenderSettings, sha256
from reportgen.model.config import RunContract
from reportgen.model.source import ValidatedRun
from reportgen.render.embedded_images import EmbeddedImageRefused, EmbeddedImages
from reportgen.render.sanitize import MAX_DEPTH, SvgRejected, nesting_depth, sanitize_svg
from reportgen.render.svg_repair import prepare_svg

RENDER_WIDTH = 512
MAX_RENDER_HEIGHT = 2048
RENDER_SECONDS = 10.0
WORKER_MEMORY_BYTES = 1 << 30


def render_settings(run: ValidatedRun) -> RenderSettings:
    return contract_render_settings(run.contract)


def contract_render_settings(contract: RunContract) -> RenderSettings:
    import cairosvg

    return RenderSettings(f"CairoSVG {cairosvg.__version__}", RENDER_WIDTH, MAX_RENDER_HEIGHT,
                          RENDER_SECONDS, contract.render_viewport)


RENDER_CODE_VERSION = "5"  # bump when render_one changes what it produces


def cache_key(svg_sha: str, settings: RenderSettings) -> str:
    """A render depends on the SVG's bytes and every renderer setting, nothing else."""
    text = "\x1f".join((svg_sha, settings.describe(), repr(settings.viewport), RENDER_CODE_VERSION))
    return hashlib.sha256(text.encode()).hexdigest()


def worker_context() -> multiprocessing.context.BaseContext:
    """Where the build's worker processes come from: a fresh server process (forkserver)
    that has loaded the renderer once, never the build itself, which may by then hold
    threads and a large address space."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    # worker_guard first: the server ends with the build (see there).
    context.set_forkserver_preload(["reportgen.render.worker_guard", "reportgen.render.svg", "cairosvg"])
    return context


class RenderBudget:
    """The time a build gives all its drawings, every run's together, from its first
    render: past it, the drawings not yet rendered are said to be not rendered (and are
    drawn by the next build), however many there are and however long each takes."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = BUILD_RENDERS_SECONDS if seconds is None else seconds
        self.started: float | None = None

    def left(self) -> float:
        if self.started is None:
            self.started = time.monotonic()
        return max(0.0, self.seconds - (time.monotonic() - self.started))

    def note(self) -> str:
        return f"{BUILD_OUT_OF_TIME} ({self.seconds:g} s for all its drawings); the next build draws it"


def render_all(svgs: Mapping[str, bytes], settings: RenderSettings, processes: int | None = None,
               tick: Callable[[], None] = lambda: None, stop: threading.Event | None = None,
               budget: RenderBudget | None = None, batch_max: int | None = None) -> dict[str, Render]:
    """Render each distinct SVG once (keyed by its sha256), in parallel worker processes.

    Workers come from a fresh server process (forkserver), never forked from the build
    itself, which by then may hold threads and a large address space (the chart engine).
    A worker that dies breaks only the files in flight: they are retried once, each on
    its own, in a new pool, and a file that breaks a pool twice is reported as crashing
    the renderer."""
    if not svgs:
        return {}
    budget = budget or RenderBudget()
    if budget.left() <= 0:
        return {sha: _failed(sha, budget.note()) for sha in svgs}
    pending = dict(sorted(svgs.items()))
    processes = max(1, min(processes or os.cpu_count() or 1, len(pending)))
    context = worker_context()
    results: dict[str, Render] = {}
    strikes: dict[str, int] = {}
    size = _batch_size(len(pending), processes, batch_max or BATCH_MAX)
    while pending:
        broken: list[str] = []
        with ProcessPoolExecutor(processes, mp_context=context, initializer=_init_worker) as pool:
            _check_pool(pool)
            items = list(pending.items())
            futures = {pool.submit(render_batch, items[i:i + size], settings): [sha for sha, _ in items[i:i + size]]
                       for i in range(0, len(items), size)}
            # Each render stops itself at the budget, or its worker at HARD_FACTOR times it;
            # this backstop covers the rest, and never grows past RENDERS_SECONDS, nor past
            # what is left of the build's time for all its drawings.
            per_run = min(settings.seconds * (len(pending) / processes + 2) + 30, RENDERS_SECONDS)
            backstop = min(per_run, budget.left())
            try:
                for future in as_completed(futures, timeout=backstop):
                    if stop is not None and stop.is_set():  # the build failed: render no more
                        pool.shutdown(wait=True, cancel_futures=True)
                        return {}
                    shas = futures[future]
                    try:
                        results.update(zip(shas, future.result(), strict=True))
                    except BrokenProcessPool:
                        broken += shas
                    except Exception as exc:  # the call page says so; the build goes on (and is not cached)
                        results.update((sha, _failed(sha, f"{NOT_KEPT} ({type(exc).__name__})")) for sha in shas)
                    for _ in shas:
                        tick()
            except FuturesTimeout:
                late = (budget.note() if backstop < per_run
                        else f"{OUT_OF_TIME} ({backstop:.0f} s); the next build draws it")
                for shas in futures.values():
                    results.update((sha, _failed(sha, late)) for sha in shas if sha not in results)
                # Not cancelled one by one: the killed pool fails what is left, and (Python
                # 3.11) failing a cancelled future raises in the pool's own thread.
                _kill_workers(pool)
        pending, size = {}, 1  # a retried file is rendered on its own: a crash takes down only itself
        for sha in broken:
            strikes[sha] = strikes.get(sha, 0) + 1
            if strikes[sha] >= 2:
                results[sha] = _failed(sha, "not rendered: the renderer crashed on this file, or ran past "
                                       f"{settings.seconds * HARD_FACTOR:g} s")
            else:
                pending[sha] = svgs[sha]
    return results


# Failures of the workers or of the build's time rather than of a drawing: said on the
# page, never cached.
NOT_KEPT = "not rendered: the renderer failed"
OUT_OF_TIME = "not rendered: the drawings of this run ran past the build's time for them"
RENDERS_SECONDS = 1800.0  # the longest a build waits for one run's drawings
BUILD_OUT_OF_TIME = "not rendered: the build's time for drawings ran out"
BUILD_RENDERS_SECONDS = 3600.0  # the longest a build waits for all its drawings (Tuning.render_seconds)


def _batch_size(n: int, processes: int, batch_max: int) -> int:
    """SVGs sent to a worker at a time: enough that a render (some milliseconds) is not
    kept waiting for the build process to hand over the next (its thread that feeds the
    workers runs only when the busy build lets go of the interpreter), few enough that
    every worker gets several batches and they finish together."""
    return max(1, min(batch_max, n // (processes * 8)))


BATCH_MAX = 32  # the default of Tuning.render_batch_max


def render_batch(items: list[tuple[str, bytes]], settings: RenderSettings) -> list[Render]:
    """render_one on each SVG of a batch, in a worker: one drawing's failure is its own,
    never its batch's."""
    return [_render_alone(sha, data, settings) for sha, data in items]


def _render_alone(sha: str, data: bytes, settings: RenderSettings) -> Render:
    # The budget's alarm cannot stop cairo inside its C code; past HARD_FACTOR times the
    # budget, a thread ends the worker itself (cairo lets other threads run meanwhile),
    # and the pool retries its drawings, each on its own (see render_all).
    watchdog = threading.Timer(settings.seconds * HARD_FACTOR, _end_worker) if _WORKER["in"] else None
    if watchdog is not None:
        watchdog.daemon = True
        watchdog.start()
    try:
        return render_one(data, settings)
    except _RenderTimeout:
        return _failed(sha, timeout_note(settings.seconds))
    except RecursionError:
        return _failed(sha, TOO_DEEP)
    except Exception as exc:  # noqa: BLE001 - whatever a hostile file raises is its own note
        return _failed(sha, f"not rendered: {type(exc).__name__}: {str(exc)[:200]}")
    finally:
        if watchdog is not None:
            watchdog.cancel()


HARD_FACTOR = 3  # a render still running at this many times its budget ends its worker
_WORKER = {"in": False}  # set in the render workers only: the build itself is never ended


def _end_worker() -> None:  # pragma: no cover - runs in a worker
    os.kill(os.getpid(), signal.SIGKILL)


class RenderPoolError(ReportgenError):
    """The render worker processes themselves cannot run: no drawing is to blame."""


def _ping() -> int:
    return os.getpid()


def _check_pool(pool: ProcessPoolExecutor) -> None:
    """Fail the build, naming the cause, when the workers cannot start at all (rather
    than report every drawing as crashing the renderer). The usual cause is a script
    that calls reportgen without an ``if __name__ == "__main__":`` guard: each worker
    process imports the script again."""
    try:
        pool.submit(_ping).result(timeout=120)
    except (BrokenProcessPool, FuturesTimeout, OSError) as exc:
        raise RenderPoolError(
            f"the SVG renderer's worker processes could not start ({type(exc).__name__}: {exc}); "
            "if reportgen is called from a script, put the call under "
            "'if __name__ == \"__main__\":' (worker processes import the script)") from exc


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    for process in list(getattr(pool, "_processes", {}).values()):
        process.kill()


def _failed(sha: str, note: str, notes: Iterable[str] = ()) -> Render:
    return Render(sha, None, None, None, None, (*notes, note))


RENDER_NICENESS = 10  # renders take the cores the build's own thread leaves


def _init_worker() -> None:
    from reportgen.render.worker_guard import end_with_parent

    end_with_parent()  # a worker ends with its server, which ends with the build
    _WORKER["in"] = True
    try:  # the build's own thread reads, checks and analyses meanwhile, and decides when pages can start
        os.nice(RENDER_NICENESS)
    except (AttributeError, OSError):  # pragma: no cover - not on every platform
        pass
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    except (ImportError, ValueError, OSError):  # pragma: no cover - not on every platform
        pass


class _RenderTimeout(Exception):
    pass


_ALARM = {"fired": False}
# After the budget, the alarm repeats at this interval: a timeout raised while CairoSVG is
# inside a callback from C can be swallowed there ("exception ignored"), so one alarm is
# not enough to stop the render.
ALARM_REPEAT_S = 0.05


def _on_alarm(signum, frame):  # pragma: no cover - runs in a worker
    _ALARM["fired"] = True
    raise _RenderTimeout


# What a refused reference is replaced by, so the rest of the drawing still renders.
_EMPTY_SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'


class _RefusingFetcher:
    """CairoSVG's url_fetcher: never opens a file or URL. It answers every reference
    with an empty stand-in and remembers what it refused, for the call page. Only an
    embedded data: image is decoded, within the limits of ``EmbeddedImages``; one it
    refuses stops the render (EmbeddedImageRefused), named on the call page."""

    def __init__(self) -> None:
        self.refused: list[str] = []
        self.images = EmbeddedImages()

    def __call__(self, url: str, resource_type: str) -> bytes:
        if url[:5].lower() == "data:":
            return self.images.fetch(url, resource_type)
        self.refused.append(url[:100])
        if resource_type.startswith("image/svg"):
            return _EMPTY_SVG
        if resource_type.startswith("image/"):
            return _empty_png()
        return b""


def _empty_png() -> bytes:
    """A 1×1 transparent PNG, made by the same cairo that reads it."""
    import io

    import cairocffi

    buffer = io.BytesIO()
    cairocffi.ImageSurface(cairocffi.FORMAT_ARGB32, 1, 1).write_to_png(buffer)
    return buffer.getvalue()


def render_one(data: bytes, settings: RenderSettings) -> Render:
    """Parse safely, repair what is recorded as repairable, render to a bounded PNG."""
    svg_sha = sha256(data)
    read = _read_drawing(data, svg_sha, settings)
    if isinstance(read, Render):
        return read
    data, _, notes, size, out_height = read
    try:
        safe = sanitize_svg(data)
    except SvgRejected:
        safe = None
    fetcher = _RefusingFetcher()
    try:
        png = _convert(data, fetcher, settings, size, out_height)
    except _RenderTimeout:
        return _failed(svg_sha, timeout_note(settings.seconds), notes)
    except EmbeddedImageRefused as exc:
        return _failed(svg_sha, f"not rendered: {exc}", notes)
    except RecursionError:
        return _failed(svg_sha, ENDLESS, notes)
    except MemoryError:
        return _failed(svg_sha, TOO_LARGE, notes)
    except Exception as exc:  # CairoSVG raises many types for bad input; all are notes
        return _failed(svg_sha, f"not rendered: {type(exc).__name__}: {str(exc)[:200]}", notes)
    image_note = fetcher.images.note()
    if image_note:
        notes.append(image_note)
    if fetcher.refused:
        notes.append(refused_note(fetcher.refused))
    return Render(svg_sha, png, sha256(png), safe, sha256(safe) if safe else None, tuple(notes))


def drawing_notes(data: bytes, svg_sha: str, settings: RenderSettings) -> tuple[str, ...]:
    """The notes the renderer gives these bytes before it draws them (repairs, an
    assumed size, or why they cannot be drawn): a render's notes but those drawing adds.
    What a cached render's notes are made of again, from the SVG itself."""
    read = _read_drawing(data, svg_sha, settings)
    return read.notes if isinstance(read, Render) else tuple(read[2])


def _read_drawing(data: bytes, svg_sha: str, settings: RenderSettings
                  ) -> Render | tuple[bytes, Element, list[str], tuple[float, float], int]:
    """The drawing parsed and sized (the bytes to draw, the root, the notes so far, the
    size, the height of the PNG), or the failed render when it cannot be drawn."""
    if not data.strip():
        return _failed(svg_sha, "not rendered: the SVG is empty")
    prepared = prepare_svg(data, svg_sha)
    notes = list(prepared.notes)
    if prepared.root is None:
        return _failed(svg_sha, f"not rendered: {prepared.problem}", notes)
    if nesting_depth(prepared.root) > MAX_DEPTH:  # every step after this one recurses through the tree
        return _failed(svg_sha, f"not rendered: elements nested more than {MAX_DEPTH} deep", notes)
    width, height, size_note = _intrinsic_size(prepared.root, settings.viewport)
    if size_note:
        notes.append(size_note)
    out_height = round(settings.width * height / width)
    if out_height > settings.max_height:
        return _failed(svg_sha, f"not rendered: a {width:g}×{height:g} drawing would be "
                       f"{out_height} px tall at {settings.width} px wide (limit {settings.max_height})", notes)
    return prepared.data, prepared.root, notes, (width, height), out_height


# Notes of drawings that fail as they are drawn, in words of their own (a cache record may keep them).
ENDLESS = "not rendered: the SVG references itself without end"
TOO_LARGE = "not rendered: the SVG needs more memory than the renderer may use"
TOO_DEEP = "not rendered: the SVG is nested or refers to itself too deeply"


def timeout_note(seconds: float) -> str:
    return f"not rendered: the renderer did not finish in {seconds:g} s"


def refused_note(refused: Iterable[str]) -> str:
    urls = list(refused)
    shown = ", ".join(dict.fromkeys(urls))
    return f"{len(urls)} external reference(s) refused and drawn as nothing: {shown}"


def _convert(data: bytes, fetcher: _RefusingFetcher, settings: RenderSettings,
             size: tuple[float, float], out_height: int) -> bytes:
    """CairoSVG, on bytes we read ourselves, within the time budget (_RenderTimeout)."""
    from reportgen.render.png_surface import OpaquePNGSurface as PNGSurface  # svg2png() does not pass url_fetcher on

    # The budget is a timer signal, which only the main thread of a process can take
    # (render workers are processes; a direct call from another thread runs unbounded).
    can_alarm = hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGALRM, _on_alarm) if can_alarm else None
    try:
        try:
            if previous is not None:
                _ALARM["fired"] = False
                signal.setitimer(signal.ITIMER_REAL, settings.seconds, ALARM_REPEAT_S)
            png = PNGSurface.convert(
                bytestring=data, url_fetcher=fetcher, unsafe=False,
                parent_width=size[0], parent_height=size[1],
                output_width=settings.width, output_height=max(1, out_height),
                background_color="white",
            )
        finally:
            if previous is not None:  # disarm before anything else runs
                signal.setitimer(signal.ITIMER_REAL, 0)
        if previous is not None and _ALARM["fired"]:  # the budget ran out, whatever caught the alarm
            raise _RenderTimeout
        return png
    finally:
        if previous is not None:
            signal.signal(signal.SIGALRM, previous)


_LENGTH = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(px)?\s*$")


def _intrinsic_size(root, viewport: tuple[float, float]) -> tuple[float, float, str | None]:
    def length(name: str) -> float | None:
        match = _LENGTH.match(root.get(name, ""))
        return float(match.group(1)) if match and float(match.group(1)) > 0 else None

    width, height = length("width"), length("height")
    if width and height:
        return width, height, None
    parts = re.split(r"[\s,]+", root.get("viewBox", "").strip())
    try:
        vb_w, vb_h = float(parts[2]), float(parts[3])
        if vb_w > 0 and vb_h > 0:
            return vb_w, vb_h, None
    except (IndexError, ValueError):
        pass
    w, h = viewport
    return w, h, f"the SVG gives no size: rendered in the task's viewport {w:g}×{h:g}"
