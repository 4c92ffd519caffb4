"""Everything above -> {relative path: bytes} for one version, through the theme.

Pages are rendered by jinja2 with autoescaping on for every template: model text and
log fields are data, never markup. Links are relative and name files, so the site
works from file://, from a server root and under a sub-path.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import jinja2
from markupsafe import Markup

from reportgen import __version__
from reportgen.audit.redaction import redactions_json
from reportgen.claims.claim import RESULTS_SCHEMA, Claim
from reportgen.model.findings import Finding
from reportgen.render.evidence import (EVIDENCE_PREVIEW, claims_by_run, claims_by_set, claims_page, evidence_index,
                                       findings_of, first_with_evidence, Members, set_members, sheet_shares)
from reportgen.render.findings_view import AUDIT_PAGE_CALLS, FINDING_CALLS, long_findings
from reportgen.render.report import Report, RunReport
from reportgen.render.theme import theme_environment, theme_static
from reportgen.render.shared import RunSheets, SheetsMade, VersionOutput, write_shared
from reportgen.render.sheets import request_names
from reportgen.render.views import CallsByRun, RunView, run_view

ARTIFACTS_SCHEMA = "reportgen.artifacts/3"
FINDING_CALLS_SCHEMA = "reportgen.finding-calls/1"


def findings_index(report: Report) -> dict[str, tuple[str, Finding]]:
    """Each finding by id, with its run's id (for links to the run's audit section)."""
    return {f.id: (r.analysis.run.contract.id, f) for r in report.runs for f in r.findings}


def render_version(report: Report, out: VersionOutput, tick: Callable[[], None] = lambda: None,
                   code_key: str = "", known: SheetsMade | None = None,
                   sheets_written: Callable[[], None] = lambda: None) -> None:
    """Hand every file of the version to ``out`` as soon as it is made, so pages are
    never all held at once; ``tick`` is called once per page (progress bar).

    First the store side (``shared.write_shared``): request bodies, raw files, renders,
    and the call sheets, each rendered only when the store lacks it; then the version's
    own pages, which link to them. The many small jobs go to ``out.run_tasks``, which
    may share them between processes. ``known``: the sheets of earlier builds, by key
    (see ``sheets.sheet_key``); the sheets this build makes are added to ``known.now``.
    ``sheets_written``: called once the sheets are, before the pages."""
    config = report.source.config
    env = theme_environment(report.source.root, config.theme)
    claims = {c.id: c for c in report.claims}
    static = theme_static(report.source.root, config.theme)
    for path, data in static.items():
        out.add(path, data)
    shared = write_shared(report, env, out, static, code_key,
                          SheetsMade() if known is None else known, tick)
    sheets_written()
    findings = findings_index(report)
    nav_pages = [(p.page.name, p.page.title) for p in report.pages]
    common = dict(site=config, built_at=report.built_at, claims=claims, findings=findings,
                  digest=report.source.digest, nav_pages=nav_pages,
                  wording=tuple(w for p in report.pages for w in p.cautions))
    templates: dict[str, jinja2.Template] = {}

    def page(path: str, template: str, **context) -> None:
        if template not in templates:
            templates[template] = env.get_template(template)
        root = Markup("../" * path.count("/"))  # safe by construction: escaping it ~20 times a page costs
        out.add(path, templates[template].render(root=root, path=path, **common, **context).encode("utf-8"))
        tick()

    views = [run_view(r, shared[r.analysis.run.contract.id]) for r in report.runs]
    calls = CallsByRun(views)
    evidence_sets, claim_evidence = evidence_index(report.claims, calls.runs)
    # The large single files first, so that they are shared out between processes too.
    large: list[Callable[[], None]] = [partial(page, "index.html", "index.html", runs=views)]
    tasks: list[Callable[[], None]] = []
    for run, view in zip(report.runs, views):
        rid = view.id
        large.append(partial(page, f"experiments/{rid}/index.html", "experiment.html", run=view))
        large += _audit_jobs(page, out, view)
        for service in view.services:
            tasks.append(partial(page, f"experiments/{rid}/{service.id}.html", "service.html", run=view,
                                 service=service))
        _emit_run_files(out, run, shared[rid])
    for rendered in report.pages:
        page(f"pages/{rendered.page.name}.html", "page.html", narrative=rendered)
    by_id = {v.id: v for v in views}

    def evidence_page(key: str, run_id: str, service: str, ids: Sequence[str], supports: Sequence[Claim],
                      members: Members | None) -> None:
        page(f"evidence/{run_id}/{key}.html", "evidence.html", run_id=run_id, service=service, n_calls=len(ids),
             supports=supports, drawings=by_id[run_id].drawings,
             **sheet_shares(by_id[run_id], service, ids, members))

    cited, members = claims_by_set(claim_evidence), set_members(evidence_sets, by_id)  # before the writers fork
    for key, (run_id, service, ids) in evidence_sets.items():
        tasks.append(partial(evidence_page, key, run_id, service, ids, [claims[c] for c in cited.get(key, ())],
                             members.get(key)))
    # The claims: one small index (every id keeps its anchor there, linking onward) and a
    # page per experiment. (A theme's own claims.html, written for the single page, still has what it had.)
    by_run = claims_by_run(report.claims)
    large.append(partial(page, "claims.html", "claims.html", runs=views, claims_of=by_run, claim_list=report.claims,
                         calls=calls, claim_evidence=claim_evidence, preview=EVIDENCE_PREVIEW))
    for view in views:
        own = by_run.get(view.id, ())
        large.append(partial(page, claims_page(view.id), "claims_run.html", run=view, claim_list=own, calls=calls,
                             claim_evidence=claim_evidence, preview=EVIDENCE_PREVIEW,
                             previewed_at=first_with_evidence(own), page_findings=findings_of(own)))
    # results.json names every claim's calls, as artifacts.json every call's files: each
    # reads every call. Written here, before the page writers are forked: a helper copies
    # each page of memory its jobs read (see ``run_tasks``), so the helper that wrote one
    # of them held a copy of most of the pages that hold the calls.
    _emit_results(out, report)
    out.run_tasks(large + tasks)
    out.add("data/reportgen.toml", (report.source.root / "reportgen.toml").read_bytes())


def _emit_run_files(out: VersionOutput, run: RunReport, shared: RunSheets) -> None:
    """A run's charts and data files, and its artifacts.json (see results.json in
    ``render_version``: written before the page writers are forked)."""
    rid = run.analysis.run.contract.id
    for chart in run.charts:
        out.add(f"charts/{rid}/{chart.name}.svg", chart.svg)
    for path, data in _data_files(run).items():
        out.add(path, data)
    out.add(f"data/{rid}/artifacts.json", artifacts_json(run, shared))


def _audit_jobs(page: Callable[..., None], out: VersionOutput, view: RunView) -> list[Callable[[], None]]:
    """The run's audit page, every finding in full (which the experiment page summarises),
    and the data file naming the calls of the findings too long for it to list."""
    if not view.findings:
        return []
    rid = view.id
    audit = partial(page, f"experiments/{rid}/audit.html", "audit.html", run=view, listed_calls=AUDIT_PAGE_CALLS,
                    finding_calls=f"data/{rid}/{FINDING_CALLS}")
    jobs: list[Callable[[], None]] = [audit]
    if long_findings(view.findings):
        jobs.append(partial(_emit_finding_calls, out, f"data/{rid}/{FINDING_CALLS}", view.findings))
    return jobs


def _emit_finding_calls(out: VersionOutput, path: str, findings: Sequence[Finding]) -> None:
    head = {"schema": FINDING_CALLS_SCHEMA, "about": "every call of each finding too long to list on its "
            "audit page, by finding id (as in results.json)"}
    out.add_pieces(path, json_pieces(head, {"findings": long_findings(findings)}))


def _emit_results(out: VersionOutput, report: Report) -> None:
    out.add_pieces("data/results.json", results_json(report))


def results_json(report: Report) -> Iterator[bytes]:
    """data/results.json, a piece at a time (see ``json_lines``)."""
    head = {
        "schema": RESULTS_SCHEMA, "version": report.source.config.version,
        "source_digest": report.source.digest, "built_at": report.built_at,
        "generator": f"reportgen {__version__}",
    }
    return json_pieces(head, {"claims": (c.to_json() for c in report.claims),
                              "findings": (f.to_json() for r in report.runs for f in r.findings)})


def json_lines(head: Mapping[str, object], long: Mapping[str, Iterable[object] | Mapping[str, object]]) -> bytes:
    """A JSON object whose long lists and maps hold one item per line: a line-by-line
    diff of two versions shows the claims that changed, and a claim's evidence list of
    thousands of call ids costs one line, not thousands of indented ones."""
    return b"".join(json_pieces(head, long))


PIECE_CHARS = 1 << 20  # what json_pieces gathers before it hands a piece on


def json_pieces(head: Mapping[str, object], long: Mapping[str, Iterable[object] | Mapping[str, object]]
                ) -> Iterator[bytes]:
    """``json_lines``, as pieces of about a megabyte each, its long lists made (and
    their items dumped) one item at a time as the pieces are asked for."""
    held: list[str] = []
    size = 0
    for text in _json_texts(head, long):
        held.append(text)
        size += len(text)
        if size >= PIECE_CHARS:
            yield "".join(held).encode("utf-8")
            held, size = [], 0
    yield "".join(held).encode("utf-8")


def _json_texts(head: Mapping[str, object], long: Mapping[str, Iterable[object] | Mapping[str, object]]
                ) -> Iterator[str]:
    def dump(value: object) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))

    yield "{\n " + ",\n ".join(f"{dump(k)}: {dump(v)}" for k, v in head.items())
    first = not head
    for key, items in long.items():
        brackets = "{}" if isinstance(items, Mapping) else "[]"
        yield ("" if first else ",\n ") + f"{dump(key)}: {brackets[0]}"
        first = False
        lines = (f"  {dump(k)}: {dump(v)}" for k, v in items.items()) if isinstance(items, Mapping) \
            else (f"  {dump(item)}" for item in items)
        any_line = False
        for line in lines:
            yield (",\n" if any_line else "\n") + line
            any_line = True
        yield ("\n " if any_line else "") + brackets[1]
    yield "\n}\n"


def artifacts_json(run: RunReport, shared: RunSheets) -> bytes:
    """Where the run's calls and raw files are published: each sheet with its calls and
    pack (whose index.json lists every artifact of those calls), each request body, and
    each drawing's render, every name a file of the store; so verify and diff can follow
    them without parsing pages."""
    renders = {}
    drawings = {svg.sha256 for bundle in run.artifacts.values() if (svg := bundle.first("svg")) is not None}
    for sha in sorted(drawings):
        render = run.renders.get(sha)
        if render is not None:
            renders[sha] = {
                "png": f"{render.png_sha256}.png" if render.png else None,
                "sanitized_svg": f"{render.safe_svg_sha256}.svg" if render.safe_svg else None,
                "notes": list(render.notes),
            }
    sheets = [{"service": place.service, "page": page, "pack": pack, "calls": [c.call_id for c in place.calls]}
              for place, page, pack in zip(shared.places, shared.pages, shared.packs)]
    head = {"schema": ARTIFACTS_SCHEMA, "renderer": run.settings.describe(), "store": "../../../store/"}
    return json_lines(head, {"requests": dict(sorted(request_names(run).items())), "sheets": sheets,
                             "renders": renders})


def _data_files(run: RunReport) -> dict[str, bytes]:
    vr = run.analysis.run
    rid = vr.contract.id
    files = {
        f"data/{rid}/run.toml": vr.contract.text.encode("utf-8"),
        f"data/{rid}/{vr.log.name}": vr.log_bytes,
    }
    if vr.contract.schedule is not None:  # the audit holds the log to it: verify must read it too
        files[f"data/{rid}/schedule.csv"] = vr.contract.schedule.data
    if vr.grading.blind is not None:  # the build joins them and verify recomputes from them
        for name, data in vr.grading.blind.files.items():
            files[f"data/{rid}/grades/{name}"] = data
    redactions = redactions_json(vr)
    if redactions is not None:
        files[f"data/{rid}/redactions.json"] = redactions
    return files
