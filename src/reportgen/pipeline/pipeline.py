"""The build, one line per stage: load -> validate -> audit -> analyse -> claims -> render -> write.

This module reads and loads the source and finds whether its version is up to date;
the stages after that are in ``stages``, imported only then (they import the heavy
libraries: see ``memory_and_imports``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from reportgen.pipeline.incremental import NO_CHECK, IncrementalCheck
from reportgen.progress import Progress, QuietProgress
from reportgen.pipeline.render_pool import BackgroundRenders
from reportgen.pipeline.memory_and_imports import (collector_paused, freeze_made, later_stages, made_while_listed,
                                                   site_files, stages_imported_before)
from reportgen.pipeline.runner import ParallelRunner, Runner
from reportgen.pipeline.source_reading import SourceReading
from reportgen.pipeline.summary import BuildSummary, summary_of
from reportgen.load.source import load_source
from reportgen.model.config import SiteConfig
from reportgen.model.source import SourceSnapshot, ValidatedRun, ValidatedSource
from reportgen.render.render_cache import RenderCache

if TYPE_CHECKING:
    from reportgen.pipeline.provisional import Provisional
    from reportgen.render.report import Report
from reportgen.write.lock import SiteLock
from reportgen.write.version import check_publishable, remove_leftovers

__all__ = ["BuildSummary", "build_site", "default_cache"]


def default_cache() -> Path:
    """Where renders are kept between builds: $REPORTGEN_CACHE, else the user's cache folder."""
    if os.environ.get("REPORTGEN_CACHE"):
        return Path(os.environ["REPORTGEN_CACHE"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "reportgen" / "renders"


def build_site(source: Path, out: Path, version: str | None = None, force: bool = False,
               progress: Progress | None = None, redact: bool = False,
               cache: Path | None = None, runner: Runner | None = None) -> BuildSummary:
    """Build ``source`` into ``out/<version>/``, stage by stage. ``runner``: how the work
    is spread over the cores (default ``ParallelRunner()``; ``SequentialRunner()`` builds
    the same site in one process); ``redact``: publish a copy with every credential replaced."""
    build = _Build(source, out, version, force, redact, cache, progress or QuietProgress(), runner or ParallelRunner())
    with collector_paused(), build.copies:      # forked copies: waited for, or stopped when the build fails
        with build.renders:                     # the render thread: gone before the pages are written
            snapshot = build.read()             # read: every file listed and hashed; the SVGs start rendering
            earlier = build.earlier(snapshot)   # check: the version built before from these very inputs
            if earlier is not None:
                return earlier
            validated = build.load()            # load: the source validated
            report = build.report(validated)    # audit -> (--redact) -> analyse -> claims, with renders and charts
        return build.write(report)              # render -> write: the version, its store files, the site files


class _Build:
    """What the stages of one build share: its options, its runner, the forked copies and
    the background renders at work, and what the reading and the check found."""

    def __init__(self, source: Path, out: Path, version: str | None, force: bool, redact: bool,
                 cache: Path | None, progress: Progress, runner: Runner) -> None:
        self.started = time.perf_counter()
        self.source, self.out, self.version, self.force = source, out, version, force
        self.redact, self.cache, self.progress, self.runner = redact, cache, progress, runner
        self.copies = contextlib.ExitStack()
        self.render_cache = RenderCache(cache)
        self.renders = BackgroundRenders(self.render_cache, progress, runner)  # no thread yet: a copy may be forked
        self.check = NO_CHECK
        self.loaded: ValidatedSource | None = None
        self.provisional: dict[str, Provisional] = {}  # by run id: see _analyse_meanwhile
        self.save_hashes: Callable[[], object] = lambda: None

    def read(self) -> SourceSnapshot | None:
        """Each folder's SVGs are rendered from the moment they are read (a version found
        up to date has them all in the cache); with --redact, the redacted copies are drawn,
        once made. A large source is listed apart while its logs are parsed here."""
        self.progress.stage(f"reading {self.source}")
        drawings = None if self.redact else partial(self.renders.start_early, self.source)
        self.reading = SourceReading(self.source, self.cache, self.copies, drawings, self.runner, self.version)
        if self.reading.apart:
            self.loaded = _load(self.source, partial(stages_imported_before, self.reading.snapshot), self.version,
                                self._analyse_meanwhile)
        return self.reading.snapshot()

    def _analyse_meanwhile(self, config: SiteConfig, run: ValidatedRun) -> None:
        """A large run analysed, and audited as far as its folder's files are not needed,
        while its folder is listed apart, as it will load if the listing changes none of
        its calls: used only if it does not (see ``provisional``). Should that fail, it is
        made again in its stage, where a failure is reported as it always was."""
        with contextlib.suppress(Exception):
            self.provisional[run.contract.id] = made_while_listed(config, run)

    def earlier(self, snapshot: SourceSnapshot | None) -> BuildSummary | None:
        # From the check that the version is ours to write to versions.json: one build at a time.
        if snapshot is not None:
            self.copies.enter_context(SiteLock(self.out, _say_always))
        self.check, earlier = _checked(snapshot, self.source, self.out, self.version, self.redact, self.cache,
                                       self.force, self.progress)
        if earlier is None:
            return None
        self.renders.cancel()
        return dataclasses.replace(earlier, seconds=time.perf_counter() - self.started)

    def load(self) -> ValidatedSource:
        validated = self.loaded or _load(self.source, self.reading.snapshot, self.version)
        self.save_hashes = self.reading.saving()
        return validated

    def report(self, validated: ValidatedSource) -> Report:
        return later_stages().analysed_report(validated, self.check, self.renders, self.redact, self.progress,
                                              self.runner, self.provisional)

    def write(self, report: Report) -> BuildSummary:
        return later_stages().publish(report, self.out, self.check, self.render_cache, self.save_hashes,
                                      self.redact, self.progress, self.copies, self.started, self.runner)


def _say_always(message: str) -> None:
    """A line on stderr whatever the verbosity: a build that waits for another must say
    for whom (with -q, it would seem to hang)."""
    print(f"  {message}", file=sys.stderr, flush=True)


def _load(source: Path, listing: Callable[[], SourceSnapshot | None], version: str | None,
          meanwhile: Callable[[SiteConfig, ValidatedRun], None] | None = None) -> ValidatedSource:
    validated = load_source(source, listing=listing, version_label=version, meanwhile=meanwhile)
    freeze_made()
    return validated


def _checked(snapshot: SourceSnapshot | None, source: Path, out: Path, version: str | None, redact: bool,
             cache: Path | None, force: bool, progress: Progress) -> tuple[IncrementalCheck, BuildSummary | None]:
    """What earlier builds left for these inputs; and the summary of the earlier build of
    this very version, when it is up to date (else the version is checked to be ours to
    write, before anything is written)."""
    if snapshot is None:  # the site configuration has problems: loading the source reports them
        return NO_CHECK, None
    label = version or snapshot.config.version
    check = IncrementalCheck.of(source, out, label, snapshot.config.theme, snapshot.digest, redact, cache)
    earlier = _up_to_date(check, snapshot, source, out, label, progress)
    if earlier is None:
        check_publishable(out, label, snapshot.digest, force)  # published from elsewhere: refused
    return check, earlier


def _up_to_date(check: IncrementalCheck, snapshot: SourceSnapshot, source: Path, out: Path, label: str,
                progress: Progress) -> BuildSummary | None:
    """The summary of the earlier build of these very inputs, when its version is still
    as it wrote it; the site's index files are written again (other versions may have
    come since)."""
    remembered = check.earlier_build(out / label)
    if remembered is None:
        return None
    write_site_files = site_files()  # the site's index pages need the theme (jinja2), not the stages
    progress.stage(f"{out / label} was built from these same inputs and is unchanged: nothing to write")
    remove_leftovers(out, label)
    write_site_files(out, source, snapshot.config, label, snapshot.digest, remembered.built_at, out / label, progress)
    summary = summary_of(remembered, label, out / label, remembered.n_renders, 0.0, 0)
    return dataclasses.replace(summary, up_to_date=True)

