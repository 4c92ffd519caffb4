"""The build's two process rules: how it keeps the cycle collector out of its way, and
which heavy modules it imports only once it needs them.

**The collector.** A build holds millions of long-lived objects (rows, calls, artifacts,
page views). The collector would walk all of them again and again, and in the forked
copies of the build copy every memory page it touches. So it is off for the whole build
(``collector_paused``); what each stage made is frozen out of its reach as soon as it is
made (``freeze_made``: after loading, after the audit, before writing); and the ``build``
command freezes everything once more before the process ends (``freeze_before_exit``), so
that the collection at exit does not walk the garbage the build left.

**The imports.** The stages after loading (``stages``: the audit, the analysis, the claims,
the pages) import scipy, pandas, altair and jinja2, some two seconds; the charts import
altair, pandas and vl-convert. They are imported here, when the build first needs them
(``later_stages``, ``chart_drawer``, ``start_charts``,
``made_while_listed``):

- a build that finds its version up to date imports neither the later stages nor
  scipy, pandas, altair or vl-convert. It needs the theme (jinja2) for the site's index
  pages (``site_files``), which imports the claims' records from ``reportgen.stats``:
  the statistics import scipy when first computed, not with their records;
- a large build, whose source folder is listed by a forked copy while the logs are
  parsed, imports them meanwhile (``stages_imported_before``), on a core that would wait.

The later stages are imported by name: they import this module for the collector's rule,
and this module must not import them back.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pathlib import Path

    from reportgen.analysis.results import ExperimentAnalysis
    from reportgen.model.config import SiteConfig
    from reportgen.model.source import ValidatedRun
    from reportgen.pipeline.provisional import Provisional
    from reportgen.progress import Progress
    from reportgen.render.charts import Chart, ChartDrawer

    # write_site_files(out, root, config, label, digest, built_at, folder, progress)
    SiteFilesWriter = Callable[[Path, Path, SiteConfig, str, str, str, Path, Progress], None]

T = TypeVar("T")

# The stages after loading: see the module's docstring.
LATER_STAGES = "reportgen.pipeline.stages"


# ------------------------------------------------------------------ the collector

@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cycle collector off for the build, and what it froze handed back after.

    It is off meanwhile: the stages make objects by the million and little cyclic garbage
    besides, and each collection they set off walked everything made so far (a second
    and a half of a rebuild's reading alone; a rebuild of 100,000 calls peaks some 200 MB
    higher for the garbage kept until the end).
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if collecting:
            gc.enable()


def freeze_made() -> None:
    """What the build has made so far, out of the collector's reach (see ``collector_paused``)."""
    gc.freeze()


def freeze_before_exit() -> None:
    """Everything out of the collector's reach, as the process ends: a large build leaves
    garbage with cycles that the collector, off while it ran, has not seen; the collection
    at exit would walk a million objects (two seconds of 100,000 calls) only for the
    system to take the memory back anyway."""
    gc.freeze()


# ------------------------------------------------------------------ the deferred imports

def later_stages() -> ModuleType:
    """The stages after loading (``reportgen.pipeline.stages``), imported with the charts
    they draw and the statistics they compute: scipy, pandas, altair and jinja2, some two
    seconds."""
    stages = importlib.import_module(LATER_STAGES)
    import reportgen.render.charts  # noqa: F401  (the stages import it when they first draw)
    # The statistics import scipy.stats when first computed (reportgen.stats): in the
    # analysis, which every build that gets here does. Imported here, it is imported
    # while the folder is listed apart (0.4 s of a rebuild's analysis of 100,000 calls).
    import scipy.stats  # noqa: F401

    return stages


def stages_imported_before(wait: Callable[[], T]) -> T:
    """What ``wait`` hands back, the later stages imported first: for a wait on work done
    by another process (the folder listed apart), which their import overlaps."""
    later_stages()
    return wait()


def chart_drawer(background: bool) -> ChartDrawer:
    """What draws a run's charts; ``background``: in a worker process."""
    from reportgen.render.charts import ChartDrawer

    return ChartDrawer(background=background)


def start_charts(analysis: ExperimentAnalysis, drawer: ChartDrawer) -> Callable[[], tuple[Chart, ...]]:
    """The charts of ``analysis``, being drawn by ``drawer``; the function that waits for them."""
    from reportgen.render import charts

    return charts.start_charts(analysis, drawer)


def made_while_listed(config: SiteConfig, run: ValidatedRun) -> Provisional:
    """What a build makes of a large run while its folder is listed apart (see
    ``pipeline.provisional``), with the later stages it needs imported first."""
    later_stages()
    from reportgen.pipeline.provisional import made_while_listed as make

    return make(config, run)


def site_files() -> SiteFilesWriter:
    """What writes the files beside the versions (versions.json, index.html, 404.html):
    for a build found up to date, which needs the theme (jinja2), not the stages."""
    from reportgen.pipeline.site_files import write_site_files

    return write_site_files
