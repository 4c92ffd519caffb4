"""The build, one line per stage: load -> validate -> audit -> analyse -> claims -> render -> write.

This module reads and loads the source and finds whether its version is up to date;
the stages after that are in ``stages``, imported only then (they import the heavy
libraries: see _build_site).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from reportgen.build.incremental import NO_CHECK, IncrementalCheck
from reportgen.build.progress import Progress
from reportgen.build.render_pool import BackgroundRenders
from reportgen.build.source_reading import SourceReading
from reportgen.build.summary import BuildSummary, summary_of
from reportgen.load.source import load_source
from reportgen.model.source import SourceSnapshot, ValidatedSource
from reportgen.render.svg import RenderCache
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
               cache: Path | None = None) -> BuildSummary:
    # A build holds millions of long-lived objects (rows, calls, artifacts, page views).
    # The cycle collector would walk all of them again and again, and in the forked page
    # helpers copy every memory page it touches: each stage's results are frozen out of
    # its reach as they are made, and handed back when the build is over. The collector
    # is off meanwhile: the stages make those objects by the million and little cyclic
    # garbage besides, and each collection they set off walked everything made so far
    # (a second and a half of a rebuild's reading alone; a rebuild of 100,000 calls
    # peaks some 200 MB higher for the garbage kept until the end).
    collecting = gc.isenabled()
    gc.disable()
    try:
        with contextlib.ExitStack() as copies:  # steps done by forked copies: stopped if the build fails
            return _build_site(source, out, version, force, progress or Progress(), redact, cache, collecting,
                               copies)
    finally:
        gc.unfreeze()
        if collecting:
            gc.enable()


def _build_site(source: Path, out: Path, version: str | None, force: bool, progress: Progress,
                redact: bool, cache: Path | None, collecting: bool, copies: contextlib.ExitStack) -> BuildSummary:
    started = time.perf_counter()
    progress.stage(f"reading {source}")
    # Each folder's SVGs are rendered from the moment they are read (a version found up to
    # date has them all in the cache); with --redact, the redacted copies are drawn.
    render_cache = RenderCache(cache)
    with BackgroundRenders(render_cache, progress) as renders:  # no thread yet: the listing may be forked
        reading = SourceReading(source, cache, copies, None if redact else partial(renders.start_early, source))
        # Listed apart, the logs are parsed meanwhile; else an up-to-date version is found
        # before any log is parsed.
        validated = _load(source, partial(_listed_meanwhile, reading), version) if reading.apart else None
        snapshot = reading.snapshot()
        # From the check that the version is ours to write to versions.json: one build at a time.
        if snapshot is not None:
            copies.enter_context(SiteLock(out, progress.stage))
        check, earlier = _checked(snapshot, source, out, version, redact, cache, force, progress)
        if earlier is not None:
            renders.cancel()
            return dataclasses.replace(earlier, seconds=time.perf_counter() - started)
        validated = validated or _load(source, reading.snapshot, version)
        save_hashes = reading.saving()
        # The stages from here on import scipy, pandas, altair and jinja2 (two seconds): a
        # build that finds its version up to date never needs them, and one that lists its
        # folder apart imports them while the listing is under way (_listed_meanwhile).
        from reportgen.build import stages

        report = stages.analysed_report(validated, check, renders, redact, progress)
    return stages.publish(report, out, check, render_cache, save_hashes, redact, progress, copies, started)


def _load(source: Path, listing: Callable[[], SourceSnapshot | None], version: str | None) -> ValidatedSource:
    validated = load_source(source, listing=listing)
    gc.freeze()
    if version:
        validated = dataclasses.replace(validated, config=dataclasses.replace(validated.config, version=version))
    return validated


def _listed_meanwhile(reading: SourceReading) -> SourceSnapshot | None:
    """The source as listed apart, asked for once the logs are parsed; while the listing
    is still under way, the next stages are imported (scipy, pandas, altair, jinja2:
    two seconds, on a core that would wait)."""
    import reportgen.build.stages  # noqa: F401
    import reportgen.render.charts  # noqa: F401

    return reading.snapshot()


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
    # Imported here: the site's index pages need the theme (jinja2), not the stages.
    from reportgen.build.site_files import write_site_files

    progress.stage(f"{out / label} was built from these same inputs and is unchanged: nothing to write")
    remove_leftovers(out, label)
    write_site_files(out, source, snapshot.config, label, snapshot.digest, remembered.built_at, out / label, progress)
    summary = summary_of(remembered, label, out / label, remembered.n_renders, 0.0, remembered.n_sheets, 0)
    return dataclasses.replace(summary, up_to_date=True)

