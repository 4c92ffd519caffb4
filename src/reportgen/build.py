"""The build, one line per stage: load -> validate -> audit -> analyse -> claims -> render -> write."""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from typing import Callable

from . import __version__
from .analyze import analyze_run
from .artifacts import (RENDER_CODE_VERSION, CallArtifacts, Render, RenderCache, RenderSettings, artifact_hashes,
                        collect_artifacts, render_cached, render_settings)
from .audit import Finding, audit_run
from .calllog import searchable_text
from .charts import build_charts
from .claims import build_claims
from .content import load_pages, render_pages
from .credentials import scan_files
from .diff import diff_versions
from .errors import AuditError, InputError, Problem
from .redaction import redact_run
from .render import Report, RunReport, render_version, theme_environment
from .validate import ValidatedRun, ValidatedSource, load_source, plain_files
from .write import (VersionEntry, VersionWriter, check_publishable, reusable_files, reuse_record, save_reuse_record,
                    write_diff_page, write_site_index)

class Progress:
    """Stage messages, and a bar for the long steps when a person is watching a terminal.
    The default says nothing (library use, tests); the CLI passes its own."""

    def stage(self, message: str) -> None:
        pass

    def bar(self, label: str, total: int):
        return _NoBar()


class _NoBar:
    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def update(self, n: int = 1) -> None:
        pass


@dataclass(frozen=True)
class AuditedRun:
    run: ValidatedRun
    artifacts: dict[str, CallArtifacts]
    findings: tuple[Finding, ...]


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
    n_claims: int
    n_warnings: int
    seconds: float


def audit_source(validated: ValidatedSource,
                 on_artifacts: Callable[[ValidatedRun, dict[str, CallArtifacts]], None] = lambda run, a: None
                 ) -> list[AuditedRun]:
    """Read every run's artifacts and check the run against its contract."""
    audited = []
    for run in validated.runs:
        artifacts = collect_artifacts(run)
        on_artifacts(run, artifacts)
        findings = audit_run(run, artifact_hashes(artifacts)) + credential_findings(run, artifacts)
        audited.append(AuditedRun(run, artifacts, findings))
    return audited


def credential_findings(run: ValidatedRun, artifacts: dict[str, CallArtifacts]) -> tuple[Finding, ...]:
    # A Parquet log is binary (maybe compressed): its values are scanned, row by row.
    files = [(run.log.file, searchable_text(run.log)), (f"{run.rel_folder}/run.toml", run.contract.text.encode("utf-8"))]
    files += [(f"{run.rel_folder}/requests/{hexdigest}.json", data) for hexdigest, data in sorted(run.requests.items())]
    paths = {c.call_id: c.artifact_path for c in run.calls}
    names = {cid: os.path.basename(os.path.normpath(path)) for cid, path in paths.items()}
    files += [(f"{run.rel_folder}/{paths[cid]}" + ("" if a.name == names[cid] else f"/{a.name}"), a.data)
              for cid, bundle in sorted(artifacts.items()) for a in bundle.files if a.derived is None]
    return tuple(
        Finding("credential", "error", c.file, c.line, "",
                f"looks like a {c.kind}: remove it (and revoke it) before publishing; the build publishes "
                "nothing while a credential is in its inputs (or use --redact to publish a redacted copy)",
                id=f"{run.contract.id}.credential.{i}")
        for i, c in enumerate(scan_files(files), 1)
    )


def _redacted(audited: AuditedRun) -> AuditedRun:
    run = audited.run
    if not run.log.name.endswith(".parquet"):
        return AuditedRun(*redact_run(run, audited.artifacts, audited.findings))
    # Redaction rewrites text; a Parquet log is published as it is, so it must be clean.
    in_log = [f for f in audited.findings if f.code == "credential" and f.file == run.log.file]
    if in_log:
        raise InputError([Problem(f.file, f.line, "", f"{f.message.split(':')[0]}: --redact rewrites text "
                                  "logs only; convert this Parquet log to CSV to publish a redacted copy")
                          for f in in_log])
    redacted, artifacts, findings = redact_run(run, audited.artifacts, audited.findings)
    return AuditedRun(dataclasses.replace(redacted, log_bytes=run.log_bytes), artifacts, findings)


def refuse_errors(audited: list[AuditedRun]) -> None:
    errors = [f for a in audited for f in a.findings if f.severity == "error"]
    if errors:
        raise AuditError(errors)


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
    # its reach as they are made, and handed back when the build is over.
    try:
        return _build_site(source, out, version, force, progress or Progress(), redact, cache)
    finally:
        gc.unfreeze()


def _build_site(source: Path, out: Path, version: str | None, force: bool, progress: Progress,
                redact: bool, cache: Path | None) -> BuildSummary:
    started = time.perf_counter()
    progress.stage(f"reading {source}")
    validated = load_source(source)
    gc.freeze()
    pages = load_pages(source)
    if version:
        validated = dataclasses.replace(validated, config=dataclasses.replace(validated.config, version=version))
    label = validated.config.version
    check_publishable(out, label, validated.digest, force)
    progress.stage("auditing the run against its contract")
    render_cache = RenderCache(cache)
    with BackgroundRenders(render_cache, progress) as renders:
        # Drawings render in worker processes from the moment they are read, while this
        # process audits and analyses (with --redact, once the redacted copies exist).
        audited = audit_source(validated, on_artifacts=renders.start if not redact else lambda run, a: None)
        gc.freeze()
        if redact:
            audited = [_redacted(a) for a in audited]
            for item in audited:
                renders.start(item.run, item.artifacts)
        refuse_errors(audited)
        report = _analyse(validated, audited, progress, renders)
    gc.freeze()
    progress.stage(f"rendered {render_cache.misses} distinct SVGs, reused {render_cache.hits}")
    # Unknown claim ids in the narrative fail here, before anything is written.
    report = dataclasses.replace(report, pages=render_pages(pages, {c.id: c for c in report.claims}))
    n_pages = _count_pages(report)
    fingerprint = build_fingerprint(report, redact)
    record = reuse_record(cache, out, label) if cache is not None else None
    reusable = reusable_files(record, fingerprint, out / label) if record is not None else None
    with VersionWriter(out, label) as writer:
        if reusable is not None:
            # Same inputs, same reportgen, same theme: the same files, byte for byte.
            progress.stage(f"reusing the {len(reusable)} unchanged files of {out / label}")
            for rel, digest in reusable.items():
                writer.link(rel, out / label / rel, digest)
        else:
            with progress.bar("pages", n_pages) as bar:
                render_version(report, writer.add, tick=lambda: bar.update(1), run_tasks=writer.run_tasks)
        n_written = sum(1 for p in writer.hashes if p.endswith(".html"))
        hashes = dict(writer.hashes)
        folder = writer.commit()
    if record is not None:
        save_reuse_record(record, fingerprint, folder, hashes)
    env = theme_environment(validated.root, validated.config.theme)
    write_site_index(out, VersionEntry(label, validated.config.title, report.built_at, validated.digest),
                     env, validated.config.base_url)
    _write_previous_diff(out, validated.config.previous, folder, env, progress)
    renders = [r for run in report.runs for r in run.renders.values()]
    return BuildSummary(
        version=label, folder=folder, n_calls=sum(len(r.analysis.run.calls) for r in report.runs),
        n_pages=n_written,
        n_drawings=sum(1 for run in report.runs for b in run.artifacts.values() if b.first("svg")),
        n_renders=len(renders),
        n_render_failures=sum(1 for r in renders if r.png is None), n_renders_reused=render_cache.hits,
        n_claims=len(report.claims), n_warnings=sum(len(r.findings) for r in report.runs),
        seconds=time.perf_counter() - started,
    )


def _write_previous_diff(out: Path, previous: str | None, folder: Path, env, progress: Progress) -> None:
    if previous and (out / previous / "manifest.json").is_file():
        progress.stage(f"comparing with {previous}")
        try:
            write_diff_page(out, diff_versions(out / previous, folder), env)
        except Exception as exc:  # the new version is complete and published either way
            progress.stage(f"warning: the page of changes since {previous} was not written: {exc}")
    elif previous:
        progress.stage(f"warning: {out / previous} is not here, so the page of changes since {previous} "
                 "was not written (its link will not resolve)")


class BackgroundRenders:
    """Each run's distinct SVGs, rendered (or read from the cache) in a background thread
    that feeds the render workers; ``result`` waits for a run's renders. Leaving the
    ``with`` block early (a failed build) stops the workers."""

    def __init__(self, cache: RenderCache, progress: Progress) -> None:
        self.cache = cache
        self.progress = progress
        self.pool = ThreadPoolExecutor(1)
        self.stop = threading.Event()
        self.jobs: dict[str, tuple[RenderSettings, dict[str, bytes], Future]] = {}

    def __enter__(self) -> "BackgroundRenders":
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is not None:
            self.stop.set()
        self.pool.shutdown(wait=True, cancel_futures=True)

    def start(self, run: ValidatedRun, artifacts: dict[str, CallArtifacts]) -> None:
        settings = render_settings(run)
        svgs = _svgs(artifacts)
        if svgs:
            self.progress.stage(f"rendering {len(svgs)} distinct SVGs of {run.contract.id} in the background")
        self.jobs[run.contract.id] = (settings, svgs, self.pool.submit(
            render_cached, svgs, settings, self.cache, stop=self.stop))

    def result(self, run: ValidatedRun) -> tuple[RenderSettings, dict[str, Render]]:
        settings, _, job = self.jobs[run.contract.id]
        return settings, job.result()


def _svgs(artifacts: dict[str, CallArtifacts]) -> dict[str, bytes]:
    return {a.sha256: a.data for bundle in artifacts.values() for a in bundle.files if a.kind == "svg"}


def _analyse(validated: ValidatedSource, audited: list[AuditedRun], progress: Progress,
             renders: BackgroundRenders) -> Report:
    runs = []
    for item in audited:
        run = item.run
        progress.stage(f"analysing {run.contract.id}: {len(run.calls)} calls")
        analysis = analyze_run(run)
        claims = build_claims(analysis, item.findings)
        progress.stage("drawing charts")
        charts = build_charts(analysis)
        settings, drawn = renders.result(run)
        runs.append(RunReport(analysis, claims, item.artifacts, drawn, settings, item.findings, charts))
    return Report(validated, tuple(runs), built_at(validated))


# Packages whose output ends up in a version's files.
_OUTPUT_PACKAGES = ("jinja2", "markupsafe", "markdown-it-py", "mdit-py-plugins", "numpy", "scipy", "pandas",
                    "altair", "vl-convert-python", "cairosvg", "defusedxml")


def build_fingerprint(report: Report, redact: bool) -> str:
    """Everything a version's bytes depend on: the source (its digest covers every input
    file), the label, --redact, the theme's files, the renderer settings, and the
    versions of reportgen and of the packages that write output. Two builds with one
    fingerprint write the same files."""
    digest = hashlib.sha256()

    def add(text: str) -> None:
        digest.update(text.encode("utf-8") + b"\0")

    config = report.source.config
    for item in (__version__, config.version, report.source.digest, str(redact), config.theme):
        add(item)
    for name in _OUTPUT_PACKAGES:
        try:
            add(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            add(f"{name}=none")
    for run in report.runs:
        add(f"{run.settings.describe()}|{run.settings.viewport}|{RENDER_CODE_VERSION}")
        # A render that ran out of time may succeed another day: renders count as they came out.
        for sha, r in sorted(run.renders.items()):
            add(f"{sha}:{r.png_sha256}:{r.safe_svg_sha256}:{r.notes}")
    theme_folders = [Path(str(resources.files("reportgen.themes") / "default"))]
    if config.theme != "default":
        theme_folders.append(report.source.root / config.theme)
    for folder in theme_folders:
        for rel, path in plain_files(folder) if folder.is_dir() else []:
            with open(path, "rb") as handle:
                add(f"{folder.name}/{rel}:{hashlib.file_digest(handle, 'sha256').hexdigest()}")
    return digest.hexdigest()


def _count_pages(report: Report) -> int:
    """Pages render_version will write (for the progress bar; an estimate is enough)."""
    calls = sum(len(r.analysis.run.calls) for r in report.runs)
    services = sum(len(r.analysis.run.contract.services) for r in report.runs)
    return 2 + len(report.pages) + calls + services + 2 * len(report.runs)


def built_at(validated: ValidatedSource) -> str:
    """The build's date comes from the source, never the clock: reportgen.toml's
    built_at, else the newest call's start time."""
    if validated.config.built_at:
        return validated.config.built_at
    newest = max((c for r in validated.runs for c in r.calls), key=lambda c: c.started_at, default=None)
    return newest.started_at_text if newest else ""
