"""The build's stages once the source is loaded: audit -> analyse -> claims -> render -> write.

Apart from the loading (``pipeline``), since these import scipy, pandas, altair and jinja2:
a build imports them only once it knows its version is not up to date, and while the
source is still being read when its folder is listed apart (see ``memory_and_imports``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from reportgen.analysis.run import analyze_run
from reportgen.audit.redaction import redact_audited
from reportgen.audit.stage import AuditedRun, KnownFindings, audit_with_artifacts, refuse_errors
from reportgen.pipeline.audit_apart import AuditsApart
from reportgen.pipeline.incremental import IncrementalCheck, Remembered
from reportgen.pipeline.provisional import Provisional, of_runs_loaded
from reportgen.progress import Progress
from reportgen.pipeline.render_pool import BackgroundRenders
from reportgen.pipeline.memory_and_imports import chart_drawer, freeze_made, start_charts
from reportgen.pipeline.runner import Runner, start_apart
from reportgen.pipeline.site_files import write_previous_diff, write_site_files
from reportgen.pipeline.summary import BuildSummary, summary_of
from reportgen.claims.make import build_claims
from reportgen.load.artifacts import collect_artifacts
from reportgen.load.contents import FileContents
from reportgen.model.artifacts import CallArtifacts
from reportgen.model.source import ValidatedSource
from reportgen.render.narrative import Page, load_pages, render_pages
from reportgen.render.pages import findings_index, render_version
from reportgen.render.report import Report, RunReport
from reportgen.render.shared import SheetsMade
from reportgen.render.sheets import SHEET_CALLS
from reportgen.render.text_runs import holds_drawings
from reportgen.render.render_cache import RenderCache
from reportgen.render.theme import claim_renderer, theme_environment
from reportgen.write.store import StoreStamp
from reportgen.write.version import VersionWriter

if TYPE_CHECKING:  # charts imports altair and pandas: see memory_and_imports
    from reportgen.analysis.results import ExperimentAnalysis
    from reportgen.render.charts import Chart, ChartDrawer

    Early = dict[str, tuple[ExperimentAnalysis, Callable[[], tuple[Chart, ...]]]]


def analysed_report(validated: ValidatedSource, check: IncrementalCheck, renders: BackgroundRenders, redact: bool,
                    progress: Progress, runner: Runner, made: Mapping[str, Provisional] | None = None) -> Report:
    """Audit, analysis and claims of every run, with its renders and charts. ``made``:
    what was made of each run, by run id, while the source was listed (see ``provisional``)."""
    provisional = of_runs_loaded(made or {}, validated)
    known = {rid: made.known for rid, made in provisional.items()}  # what of each run's audit is found
    clean = check.clean_contents()
    progress.stage("auditing the run against its contract")
    # Listed before the audit's copy is forked, which then audits them while the build analyses.
    artifacts = {run.contract.id: collect_artifacts(run) for run in validated.runs}
    with (_chart_drawer(validated, runner) as drawer,
          AuditsApart(validated, artifacts, clean, redact, runner, known) as apart):
        # Without --redact the audit leaves the runs as they are: each is analysed first,
        # so that its charts are drawn (in their worker) while it is audited (a large
        # run's audit is worked out meanwhile by a copy of the build: see audit_apart).
        early = {} if redact else _analyse_early(validated, drawer, progress, provisional)
        audited = _audit(validated, artifacts, None if redact else renders, clean, apart, known)
        if redact:
            audited = _redacted(audited, renders, validated.config.not_credentials)
        refuse_errors(audited)
        check.remember_clean(clean)
        return _analyse(validated, audited, progress, renders, drawer, early)


def publish(report: Report, out: Path, check: IncrementalCheck, render_cache: RenderCache,
            save_hashes: Callable[[], object], redact: bool, progress: Progress, copies: contextlib.ExitStack,
            started: float, runner: Runner) -> BuildSummary:
    """The version written, and what the next build needs remembered; its summary."""
    validated = report.source
    freeze_made()
    progress.stage(f"rendered {render_cache.misses} distinct SVGs, reused {render_cache.hits}")
    if render_cache.unwritable:
        progress.stage(f"warning: renders were not kept for the next build ({render_cache.unwritable})")
    report = _with_narrative(report, load_pages(validated.root))
    for caution in (c for page in report.pages for c in page.cautions):  # also on the pages and the audit
        progress.stage(f"warning: {caution}")
    sheets = SheetsMade(check.sheets())
    checked_store = check.store_stamps(out)
    folder, written = _write_version(report, out, progress, check.code, sheets, runner.processes, checked_store)
    _warn_large(report, out, written.large_files(), progress)
    n_calls = sum(len(run.calls) for run in validated.runs)
    write_changes = start_apart(runner, copies, partial(write_previous_diff, out, validated.root, validated.config, folder,
                                           progress, None if redact else validated), n_calls)
    check.remember_sheets(sheets.earlier, sheets.now)
    check.remember_store_stamps(out, checked_store, written.store_stamps)
    save_hashes()
    remembered = _remembered(report, written.hashes, len(sheets.now))
    check.remember(report.runs, remembered, written.stats, written.store_stats)
    for problem in check.unkept:  # the cache is optional: the version is built either way
        progress.stage(f"warning: the cache could not keep what the next build would reuse ({problem})")
    label = validated.config.version
    write_site_files(out, validated.root, validated.config, label, validated.digest, remembered.built_at, folder,
                     progress, None if redact else validated, changes=False)
    write_changes()
    reused = sum(1 for run in report.runs for sha in run.renders if sha in render_cache.hit_shas)
    return summary_of(remembered, label, folder, reused, time.perf_counter() - started, sheets.written)


def _warn_large(report: Report, out: Path, large: dict[str, int], progress: Progress) -> None:
    """A warning for each published file over GitHub's 100 MB limit, naming its calls."""
    for name, size in sorted(large.items()):
        calls = [f"{run.analysis.run.contract.id}/{cid}" for run in report.runs for cid, bundle in run.artifacts.items()
                 if any(a.sha256 == name.split(".", 1)[0] for a in bundle.files)]
        progress.stage(f"warning: {out / 'store' / name} ({', '.join(calls) or 'a shared file'}) is "
                       f"{size / 1e6:.0f} MB: GitHub refuses files over 100 MB (see the README: publishing "
                       "a large site)")


def _audit(validated: ValidatedSource, listed: Mapping[str, dict[str, CallArtifacts]],
           renders: BackgroundRenders | None, clean: set[str] | None, apart: AuditsApart,
           known: Mapping[str, KnownFindings]) -> list[AuditedRun]:
    """Each run's findings; ``renders``: where the drawings a run needs start rendering
    while it is audited and analysed; ``known``: what of a run's audit was found while
    the source was listed, by run id."""
    audited = []
    for run in validated.runs:
        artifacts = listed[run.contract.id]
        if renders is not None:
            renders.start(run, artifacts)
        found = apart.result(run.contract.id)
        if found is None:
            audited.append(audit_with_artifacts(run, artifacts, clean, validated.config.not_credentials,
                                                known.get(run.contract.id)))
        else:
            audited.append(AuditedRun(run, artifacts, found.findings))
            if clean is not None:
                clean.update(found.clean)
    freeze_made()
    return audited


def _redacted(audited: list[AuditedRun], renders: BackgroundRenders,
              not_credentials: tuple[str, ...]) -> list[AuditedRun]:
    """--redact: every run's published copy, credentials replaced (texts declared not
    credentials left as written); what is drawn."""
    redacted = [redact_audited(a, not_credentials) for a in audited]
    for item in redacted:
        renders.start(item.run, item.artifacts)
    return redacted


def _with_narrative(report: Report, pages: tuple[Page, ...]) -> Report:
    """Narrative pages, their citations shown as every page shows claims. Unknown
    claim ids fail here, before anything is written."""
    env = theme_environment(report.source.root, report.source.config.theme)
    shown = claim_renderer(env, findings_index(report))
    return dataclasses.replace(report, pages=render_pages(pages, {c.id: c for c in report.claims}, shown))


def _write_version(report: Report, out: Path, progress: Progress, code: str, sheets: SheetsMade,
                   processes: int, checked_store: Mapping[str, StoreStamp]) -> tuple[Path, VersionWriter]:
    calls = sum(len(run.analysis.run.calls) for run in report.runs)
    with VersionWriter(out, report.source.config.version, processes, calls, checked_store) as writer:
        with progress.bar("pages", _count_pages(report)) as bar:
            render_version(report, writer, tick=writer.ticks(lambda: bar.update(1)), code_key=code, known=sheets,
                           sheets_written=partial(_let_go_of_file_bytes, report))
        return writer.commit(), writer


def _let_go_of_file_bytes(report: Report) -> None:
    """The bytes of the calls' files, let go of once the sheets that publish them are
    written (500 MB at a million calls, held through the pages' writers otherwise).
    Not for a run without drawings: its pages quote each call's first line, read from
    its response."""
    for run in report.runs:
        contents = run.analysis.run.files.data if run.analysis.run.files is not None else None
        if isinstance(contents, FileContents) and holds_drawings(run):
            contents.let_go()


def _remembered(report: Report, hashes: Mapping[str, str], n_sheets: int) -> Remembered:
    renders = [r for run in report.runs for r in run.renders.values()]
    return Remembered(
        n_calls=sum(len(r.analysis.run.calls) for r in report.runs),
        n_pages=sum(1 for p in hashes if p.endswith(".html")), n_sheets=n_sheets,
        n_drawings=sum(1 for run in report.runs for b in run.artifacts.values() if b.first("svg")),
        n_renders=len(renders), n_render_failures=sum(1 for r in renders if r.png is None),
        n_claims=len(report.claims), n_warnings=sum(len(r.findings) for r in report.runs),
        built_at=report.built_at)


def _chart_drawer(validated: ValidatedSource, runner: Runner) -> ChartDrawer:
    return chart_drawer(background=runner.charts_apart(sum(len(run.calls) for run in validated.runs)))


def _analyse_early(validated: ValidatedSource, drawer: ChartDrawer, progress: Progress,
                   provisional: Mapping[str, Provisional]) -> Early:
    """Each run's analysis (made while the source was listed, when it was of this very
    run) and its charts (being drawn), by run id."""
    early: Early = {}
    for run in validated.runs:
        progress.stage(f"analysing {run.contract.id}: {len(run.calls)} calls")
        made = provisional.get(run.contract.id)
        analysis = made.analysis if made is not None else analyze_run(run)
        early[run.contract.id] = (analysis, start_charts(analysis, drawer))
    return early


def _analyse(validated: ValidatedSource, audited: list[AuditedRun], progress: Progress,
             renders: BackgroundRenders, drawer: ChartDrawer, early: Early) -> Report:
    runs = []
    for item in audited:
        run = item.run
        found = early.get(run.contract.id)
        if found is not None and found[0].run is run:
            analysis, charts = found
        else:  # not analysed yet, or the audit made a copy
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
