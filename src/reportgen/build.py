"""The build, one line per stage: load -> validate -> analyse -> claims -> render -> write."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .analyze import analyze_run
from .artifacts import collect_artifacts, render_all, render_settings
from .claims import build_claims
from .diff import diff_versions
from .render import Report, RunReport, render_version, theme_environment
from .validate import ValidatedSource, load_source
from .write import VersionEntry, check_publishable, write_diff_page, write_site_index, write_version

Progress = Callable[[str], None]


@dataclass(frozen=True)
class BuildSummary:
    version: str
    folder: Path
    n_calls: int
    n_pages: int
    n_drawings: int  # calls with an SVG
    n_renders: int  # distinct SVGs rendered
    n_render_failures: int
    n_claims: int
    seconds: float


def build_site(source: Path, out: Path, version: str | None = None, force: bool = False,
               progress: Progress = lambda message: None) -> BuildSummary:
    started = time.perf_counter()
    progress(f"reading {source}")
    validated = load_source(source)
    if version:
        validated = dataclasses.replace(validated, config=dataclasses.replace(validated.config, version=version))
    label = validated.config.version
    check_publishable(out, label, validated.digest, force)
    report = _analyse(validated, progress)
    progress("writing pages")
    files = render_version(report)
    folder = write_version(out, label, files)
    env = theme_environment(validated.root, validated.config.theme)
    write_site_index(out, VersionEntry(label, validated.config.title, report.built_at, validated.digest),
                     env, validated.config.base_url)
    previous = validated.config.previous
    if previous and (out / previous / "manifest.json").is_file():
        progress(f"comparing with {previous}")
        try:
            write_diff_page(out, diff_versions(out / previous, folder), env)
        except Exception as exc:  # the new version is complete and published either way
            progress(f"warning: the page of changes since {previous} was not written: {exc}")
    elif previous:
        progress(f"warning: {out / previous} is not here, so the page of changes since {previous} "
                 "was not written (its link will not resolve)")
    renders = [r for run in report.runs for r in run.renders.values()]
    return BuildSummary(
        version=label, folder=folder, n_calls=sum(len(r.analysis.run.calls) for r in report.runs),
        n_pages=sum(1 for p in files if p.endswith(".html")),
        n_drawings=sum(1 for run in report.runs for b in run.artifacts.values() if b.first("svg")),
        n_renders=len(renders),
        n_render_failures=sum(1 for r in renders if r.png is None),
        n_claims=len(report.claims), seconds=time.perf_counter() - started,
    )


def _analyse(validated: ValidatedSource, progress: Progress) -> Report:
    runs = []
    for run in validated.runs:
        progress(f"analysing {run.contract.id}: {len(run.calls)} calls")
        analysis = analyze_run(run)
        claims = build_claims(analysis)
        artifacts = collect_artifacts(run)
        settings = render_settings(run)
        svgs = {a.sha256: a.data for bundle in artifacts.values() for a in bundle.files if a.kind == "svg"}
        progress(f"rendering {len(svgs)} distinct SVGs")
        renders = render_all(svgs, settings)
        runs.append(RunReport(analysis, claims, artifacts, renders, settings))
    return Report(validated, tuple(runs), built_at(validated))


def built_at(validated: ValidatedSource) -> str:
    """The build's date comes from the source, never the clock: reportgen.toml's
    built_at, else the newest call's start time."""
    if validated.config.built_at:
        return validated.config.built_at
    newest = max((c for r in validated.runs for c in r.calls), key=lambda c: c.started_at, default=None)
    return newest.started_at_text if newest else ""
