"""The build, one line per stage: load -> validate -> audit -> analyse -> claims -> render -> write."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import time
from collections.abc import Callable
from functools import partial
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reportgen.analysis.run import analyze_run
from reportgen.audit.redaction import redact_audited
from reportgen.audit.stage import AuditedRun, audit_with_artifacts, refuse_errors
from reportgen.build.audit_apart import AuditsApart
from reportgen.build.forked import start_apart
from reportgen.build.incremental import (
    NO_CHECK,
    IncrementalCheck,
    Remembered,
)
from reportgen.build.progress import Progress
from reportgen.build.render_pool import BackgroundRenders
from reportgen.build.source_reading import SourceReading
from reportgen.build.site_files import write_previous_diff, write_site_files
from reportgen.claims.build import build_claims
from reportgen.load.artifacts import collect_artifacts
from reportgen.load.source import load_source
from reportgen.model.source import SourceSnapshot, ValidatedSource
from reportgen.render.narrative import load_pages, render_pages
from reportgen.render.pages import findings_index, render_version
from reportgen.render.report import Report, RunReport
from reportgen.render.shared import SheetsMade
from reportgen.render.sheets import SHEET_CALLS
from reportgen.render.svg import RenderCache
from reportgen.render.theme import claim_renderer, theme_environment
from reportgen.write.version import (
    VersionWriter,
    check_publishable,
    remove_leftovers,
)

if TYPE_CHECKING:  # charts imports altair and pandas: see _chart_drawer
    from reportgen.analysis.results import ExperimentAnalysis
    from reportgen.render.charts import Chart, ChartDrawer

    Early = dict[str, tuple[ExperimentAnalysis, Callable[[], tuple[Chart, ...]]]]


# Calls from which a source's charts are drawn in a worker process, beside the audit
# (starting the worker costs more than a small run's charts).
BACKGROUND_CHARTS = 20_000


@dataclass(frozen=True)
class BuildSummary:
    version: str
    folder: Path
    n_calls: int
    n_pages: int
    n_drawings: int  # calls with an SVG
    n_renders: int  # distinct SVGs rendered
    n_render_failures: int
    n_renders_reused: int
    n_sheets: int  # sheets of calls the version links (pages of the store)
    n_sheets_written: int  # of those, the ones this build rendered (the others were there)
    n_claims: int
    n_warnings: int
    seconds: float
    up_to_date: bool = False  # built before from the same inputs: nothing was written


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
        check, earlier = _checked(reading.snapshot(), source, out, version, redact, cache, force, progress)
        if earlier is not None:
            renders.cancel()
            return dataclasses.replace(earlier, seconds=time.perf_counter() - started)
        validated = validated or _load(source, reading.snapshot, version)
        save_hashes = reading.saving()
        clean = check.clean_contents()
        with _chart_drawer(validated) as drawer, AuditsApart(validated, clean, redact) as apart:
            # Without --redact the audit leaves the runs as they are: each is analysed first,
            # so that its charts are drawn (in their worker) while it is audited (a large
            # run's audit is worked out meanwhile by a copy of the build: see audit_apart).
            early = {} if redact else _analyse_early(validated, drawer, progress)
            audited = _audit(validated, renders, redact, progress, clean, apart)
            check.remember_clean(clean)
            report = _analyse(validated, audited, progress, renders, drawer, early)
    gc.freeze()
    progress.stage(f"rendered {render_cache.misses} distinct SVGs, reused {render_cache.hits}")
    report = _with_narrative(report, load_pages(source))
    sheets = SheetsMade(check.sheets())
    folder, written = _write_version(report, out, progress, check.code, sheets)
    n_calls = sum(len(run.calls) for run in validated.runs)
    write_changes = start_apart(copies, partial(write_previous_diff, out, validated.root, validated.config, folder,
                                           progress, None if redact else validated), n_calls)
    check.remember_sheets(sheets.earlier, sheets.now)
    save_hashes()
    remembered = _remembered(report, written.hashes, len(sheets.now))
    check.remember(report.runs, remembered, written.stats, written.store_stats)
    n_sheets = (len(sheets.now), sheets.written)
    label = validated.config.version
    write_site_files(out, validated.root, validated.config, label, validated.digest, remembered.built_at, folder,
                     progress, None if redact else validated, changes=False)
    write_changes()
    reused = sum(1 for run in report.runs for sha in run.renders if sha in render_cache.hit_shas)
    return _summary(remembered, label, folder, reused, time.perf_counter() - started, *n_sheets)


def _load(source: Path, listing: Callable[[], SourceSnapshot | None], version: str | None) -> ValidatedSource:
    validated = load_source(source, listing=listing)
    gc.freeze()
    if version:
        validated = dataclasses.replace(validated, config=dataclasses.replace(validated.config, version=version))
    return validated


def _listed_meanwhile(reading: SourceReading) -> SourceSnapshot | None:
    """The source as listed apart, asked for once the logs are parsed; while the listing
    is still under way, what the analysis is about to import is imported (the charts:
    altair and pandas, a second)."""
    import reportgen.render.charts  # noqa: F401

    return reading.snapshot()


def _audit(validated: ValidatedSource, renders: BackgroundRenders, redact: bool,
           progress: Progress, clean: set[str] | None, apart: AuditsApart) -> list[AuditedRun]:
    progress.stage("auditing the run against its contract")
    audited = []
    for run in validated.runs:
        artifacts = collect_artifacts(run)
        if not redact:  # the drawings a run needs, rendered while it is audited and analysed
            renders.start(run, artifacts)
        found = apart.result(run.contract.id)
        if found is None:
            audited.append(audit_with_artifacts(run, artifacts, clean))
        else:
            audited.append(AuditedRun(run, artifacts, found.findings))
            if clean is not None:
                clean.update(found.clean)
    gc.freeze()
    if redact:  # with --redact, the redacted copies are what is drawn
        audited = [redact_audited(a) for a in audited]
        for item in audited:
            renders.start(item.run, item.artifacts)
    refuse_errors(audited)
    return audited


def _with_narrative(report: Report, pages) -> Report:
    """Narrative pages, their citations shown as every page shows claims. Unknown
    claim ids fail here, before anything is written."""
    env = theme_environment(report.source.root, report.source.config.theme)
    shown = claim_renderer(env, findings_index(report))
    return dataclasses.replace(report, pages=render_pages(pages, {c.id: c for c in report.claims}, shown))


def _write_version(report: Report, out: Path, progress: Progress, code: str, sheets: SheetsMade
                   ) -> tuple[Path, VersionWriter]:
    with VersionWriter(out, report.source.config.version) as writer:
        with progress.bar("pages", _count_pages(report)) as bar:
            render_version(report, writer, tick=writer.ticks(lambda: bar.update(1)), code_key=code, known=sheets)
        return writer.commit(), writer


def _remembered(report: Report, hashes, n_sheets: int) -> Remembered:
    renders = [r for run in report.runs for r in run.renders.values()]
    return Remembered(
        n_calls=sum(len(r.analysis.run.calls) for r in report.runs),
        n_pages=sum(1 for p in hashes if p.endswith(".html")), n_sheets=n_sheets,
        n_drawings=sum(1 for run in report.runs for b in run.artifacts.values() if b.first("svg")),
        n_renders=len(renders), n_render_failures=sum(1 for r in renders if r.png is None),
        n_claims=len(report.claims), n_warnings=sum(len(r.findings) for r in report.runs),
        built_at=report.built_at)


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
    progress.stage(f"{out / label} was built from these same inputs and is unchanged: nothing to write")
    remove_leftovers(out, label)
    write_site_files(out, source, snapshot.config, label, snapshot.digest, remembered.built_at, out / label, progress)
    summary = _summary(remembered, label, out / label, remembered.n_renders, 0.0, remembered.n_sheets, 0)
    return dataclasses.replace(summary, up_to_date=True)


def _summary(remembered: Remembered, label: str, folder: Path, reused: int, seconds: float, n_sheets: int,
             n_sheets_written: int) -> BuildSummary:
    fields = {k: v for k, v in remembered.__dict__.items() if k != "built_at"}
    return BuildSummary(version=label, folder=folder, n_renders_reused=reused, seconds=seconds,
                        n_sheets_written=n_sheets_written, **fields)


def _chart_drawer(validated: ValidatedSource) -> ChartDrawer:
    # Imported here, not above: altair and pandas take a second to import, which a build
    # that finds its version up to date never needs, and which a full build pays while
    # the renders keep the other cores busy.
    from reportgen.render.charts import ChartDrawer

    return ChartDrawer(background=sum(len(run.calls) for run in validated.runs) >= BACKGROUND_CHARTS)


def _analyse_early(validated: ValidatedSource, drawer: ChartDrawer, progress: Progress) -> Early:
    """Each run's analysis and its charts (being drawn), by run id."""
    from reportgen.render.charts import start_charts

    early: Early = {}
    for run in validated.runs:
        progress.stage(f"analysing {run.contract.id}: {len(run.calls)} calls")
        analysis = analyze_run(run)
        early[run.contract.id] = (analysis, start_charts(analysis, drawer))
    return early


def _analyse(validated: ValidatedSource, audited: list[AuditedRun], progress: Progress,
             renders: BackgroundRenders, drawer: ChartDrawer, early: Early) -> Report:
    from reportgen.render.charts import start_charts

    runs = []
    for item in audited:
        run = item.run
        analysis, charts = early.get(run.contract.id, (None, None))
        if analysis is None or analysis.run is not run:  # not analysed yet, or the audit made a copy
            progress.stage(f"analysing {run.contract.id}: {len(run.calls)} calls")
            analysis = analyze_run(run)
            charts = start_charts(analysis, drawer)
        claims = build_claims(analysis, item.findings)
        progress.stage("drawing charts")
        drawn_charts = charts()
        settings, drawn = renders.result(run)
        runs.append(RunReport(analysis, claims, item.artifacts, drawn, settings, item.findings, drawn_charts))
    return Report(validated, tuple(runs), built_at(validated))


def _count_pages(report: Report) -> int:
    """Pages render_version will write (for the progress bar; an estimate is enough)."""
    services = sum(len(r.analysis.run.contract.services) for r in report.runs)
    sheets = sum(len(r.analysis.run.calls) // SHEET_CALLS + len(r.analysis.run.contract.services)
                 for r in report.runs)
    return 2 + len(report.pages) + sheets + services + 2 * len(report.runs)


def built_at(validated: ValidatedSource) -> str:
    """The build's date comes from the source, never the clock: reportgen.toml's
    built_at, else the newest call's start time."""
    if validated.config.built_at:
        return validated.config.built_at
    newest = max((c for r in validated.runs for c in r.calls), key=lambda c: c.started_at, default=None)
    return newest.started_at_text if newest else ""
