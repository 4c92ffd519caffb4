"""Everything above -> {relative path: bytes} for one version, through the theme.

Pages are rendered by jinja2 with autoescaping on for every template: model text and
log fields are data, never markup. Links are relative and name files, so the site
works from file://, from a server root and under a sub-path.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from functools import partial
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import jinja2
from markupsafe import Markup

from reportgen import __version__
from reportgen.audit.redaction import redactions_json
from reportgen.claims.claim import RESULTS_SCHEMA, Claim
from reportgen.load.artifacts import svg_spans
from reportgen.model.findings import Finding
from reportgen.render.report import Report, RunReport
from reportgen.render.theme import theme_environment, theme_static
from reportgen.render.views import CallView, RunView, run_view

if TYPE_CHECKING:  # charts imports altair and pandas: a second, which pages never need
    pass

ARTIFACTS_SCHEMA = "reportgen.artifacts/2"


def findings_index(report: Report) -> dict[str, tuple[str, Finding]]:
    """Each finding by id, with its run's id (for links to the run's audit section)."""
    return {f.id: (r.analysis.run.contract.id, f) for r in report.runs for f in r.findings}


Emit = Callable[[str, bytes], None]


def run_in_order(tasks: Sequence[Callable[[], None]]) -> None:
    for task in tasks:
        task()


def render_version(report: Report, emit: Emit, tick: Callable[[], None] = lambda: None,
                   run_tasks: Callable[[Sequence[Callable[[], None]]], None] = run_in_order) -> None:
    """Hand every file of the version to ``emit`` (path, bytes) as soon as it is made, so
    pages are never all held at once; ``tick`` is called once per page (progress bar).
    The many small jobs (call pages, evidence pages, artifact files) go to ``run_tasks``,
    which may share them between processes."""
    config = report.source.config
    env = theme_environment(report.source.root, config.theme)
    claims = {c.id: c for c in report.claims}
    for path, data in theme_static(report.source.root, config.theme).items():
        emit(path, data)
    findings = findings_index(report)
    nav_pages = [(p.page.name, p.page.title) for p in report.pages]
    common = dict(site=config, built_at=report.built_at, claims=claims, findings=findings,
                  digest=report.source.digest, nav_pages=nav_pages)
    templates: dict[str, jinja2.Template] = {}

    def page(path: str, template: str, **context) -> None:
        if template not in templates:
            templates[template] = env.get_template(template)
        root = Markup("../" * path.count("/"))  # safe by construction: escaping it ~20 times a page costs
        emit(path, templates[template].render(root=root, path=path, **common, **context).encode("utf-8"))
        tick()

    def call_page_task(view: RunView, call: CallView, cited: tuple[str, ...], cited_page: str | None) -> None:
        excerpt, shortened = response_excerpt(call)
        page(call.page, "call.html", run=view, call=call, cited_by=cited, cited_page=cited_page,
             response_excerpt=excerpt, response_shortened=shortened)

    views = [run_view(r) for r in report.runs]
    calls = {(v.id, c.call.call_id): c for v in views for c in v.calls}
    evidence_sets, claim_evidence, cited_by = evidence_index(report.claims, calls)
    # The large single files first, so that they are shared out between processes too.
    large: list[Callable[[], None]] = [partial(page, "index.html", "index.html", runs=views)]
    tasks: list[Callable[[], None]] = []
    artifact_paths: set[str] = set()
    for run, view in zip(report.runs, views):
        rid = view.id
        large.append(partial(page, f"experiments/{rid}/index.html", "experiment.html", run=view))
        for service in view.services:
            tasks.append(partial(page, f"experiments/{rid}/{service.id}.html", "service.html", run=view,
                                 service=service))
        # A long list of claims is the same for many calls (all of one service, say):
        # written once on its own page, which those call pages link to.
        cited_sets: dict[tuple[str, ...], str] = {}
        n_citing: dict[tuple[str, ...], int] = {}
        for call in view.calls:
            cited = cited_by.get((rid, call.call.call_id), ())
            cited_page = None
            if len(cited) > CITED_INLINE:
                if cited not in cited_sets:
                    key = hashlib.sha256("\x1f".join((rid, *cited)).encode()).hexdigest()[:16]
                    cited_sets[cited] = f"evidence/{rid}/claims-{key}.html"
                cited_page = cited_sets[cited]
                n_citing[cited] = n_citing.get(cited, 0) + 1
            tasks.append(partial(call_page_task, view, call, cited, cited_page))
        for cited, path in cited_sets.items():
            tasks.append(partial(page, path, "cited.html", run_id=rid, claim_ids=cited, n_calls=n_citing[cited]))
        for chart in run.charts:
            emit(f"charts/{rid}/{chart.name}.svg", chart.svg)
        for path, data in _data_files(run).items():
            emit(path, data)
        large.append(partial(_emit_made, emit, f"data/{rid}/artifacts.json", partial(artifacts_json, run)))
        for path, data in _artifact_files(run).items():
            if path not in artifact_paths:  # content-addressed: runs may share a file
                artifact_paths.add(path)
                tasks.append(partial(emit, path, data))
    for rendered in report.pages:
        page(f"pages/{rendered.page.name}.html", "page.html", narrative=rendered)
    for key, (run_id, service, ids) in evidence_sets.items():
        tasks.append(partial(page, f"evidence/{run_id}/{key}.html", "evidence.html", run_id=run_id,
                             service=service, entries=[calls[(run_id, i)] for i in ids],
                             with_thumbs=len(ids) <= EVIDENCE_THUMBS))
    large.append(partial(page, "claims.html", "claims.html", claim_list=report.claims, calls=calls,
                         claim_evidence=claim_evidence, preview=EVIDENCE_PREVIEW))
    large.append(partial(_emit_made, emit, "data/results.json", partial(results_json, report)))
    run_tasks(large + tasks)
    emit("data/reportgen.toml", (report.source.root / "reportgen.toml").read_bytes())


def _emit_made(emit: Emit, path: str, make: Callable[[], bytes]) -> None:
    emit(path, make())


CITED_INLINE = 8  # a call page lists up to this many claims itself, more on a shared page
RESPONSE_EXCERPT = 400  # characters of the raw response shown on a call page; the file has all


def response_excerpt(view: CallView) -> tuple[str, bool]:
    """The start of a call's raw response for its page, and whether it is shortened (the
    whole response is its own published file). Made by the page's own task, in parallel."""
    response = view.response
    whole = response.data.decode("utf-8", "replace") if response else ""
    text = _without_svgs(whole) if view.svg is not None else whole
    return text[:RESPONSE_EXCERPT] + ("…" if len(text) > RESPONSE_EXCERPT else ""), text[:RESPONSE_EXCERPT] != whole


def _without_svgs(text: str) -> str:
    """The drawing and its source are shown and linked apart: not again in the response."""
    pieces, last = [], 0
    for start, end in svg_spans(text):
        pieces += [text[last:start], f"[an SVG of {end - start} characters: see Output]"]
        last = end
    return "".join(pieces) + text[last:]


EVIDENCE_PREVIEW = 6  # thumbnails shown with each claim on claims.html
EVIDENCE_THUMBS = 200  # an evidence page this long or shorter shows thumbnails


def evidence_index(claims: Sequence[Claim], calls: Mapping[tuple[str, str], CallView]) -> tuple[dict, dict, dict]:
    """Evidence lists, each written once however many claims share it, and the claims
    each call is evidence for.

    A claim's evidence is split by service; each (run, service, call ids) set gets one
    page under evidence/, named by a hash of its members, and claims link to those
    pages. A leaderboard's comparisons reuse the pages of the two services' rates, so
    the site grows with the number of calls, not with calls times claims. For the same
    reason a call's citing claims are found through the sets it belongs to: a few per
    call, where claims times their evidence runs to millions."""
    service_of: dict[str, dict[str, str]] = {}
    for (run_id, call_id), view in calls.items():
        service_of.setdefault(run_id, {})[call_id] = view.call.service
    sets: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    by_claim: dict[str, list[tuple[str, int, str]]] = {}
    citing: dict[str, list[int]] = {}  # set key -> the positions of the claims linking to it
    made: dict[tuple[str, tuple[str, ...]], tuple[list[tuple[str, int, str]], list[str]]] = {}
    for position, claim in enumerate(claims):
        # Many claims share one evidence list (a service's rate, its comparisons).
        known = made.get((claim.experiment, claim.evidence))
        if known is None:
            links, keys = [], []
            for service, ids in _by_service(claim.evidence, service_of.get(claim.experiment, {})).items():
                key = hashlib.sha256("\x1f".join((claim.experiment, service, *ids)).encode()).hexdigest()[:16]
                sets.setdefault(key, (claim.experiment, service, tuple(ids)))
                links.append((service, len(ids), f"evidence/{claim.experiment}/{key}.html"))
                keys.append(key)
            known = made[(claim.experiment, claim.evidence)] = (links, keys)
        by_claim[claim.id] = known[0]
        for key in known[1]:
            citing.setdefault(key, []).append(position)
    sets_of: dict[tuple[str, str], list[str]] = {}
    for key, (run_id, _, ids) in sets.items():
        for call_id in ids:
            sets_of.setdefault((run_id, call_id), []).append(key)
    merged: dict[tuple[str, ...], tuple[str, ...]] = {}  # calls of one service share their sets
    cited_by: dict[tuple[str, str], tuple[str, ...]] = {}
    for call, keys in sets_of.items():
        member_of = tuple(keys)
        if member_of not in merged:
            merged[member_of] = tuple(claims[i].id for i in sorted(i for k in member_of for i in citing[k]))
        cited_by[call] = merged[member_of]
    return sets, by_claim, cited_by


def _by_service(evidence: tuple[str, ...], service_of: Mapping[str, str]) -> dict[str, list[str]]:
    """Call ids grouped by service, in order of first appearance; an id that names no
    call goes under "". Evidence comes in runs of one service: sliced run by run."""
    services = list(map(service_of.get, evidence))
    groups: dict[str, list[str]] = {}
    start = 0
    for service, run in itertools.groupby(services):
        end = start + len(list(run))
        groups.setdefault(service or "", []).extend(evidence[start:end])
        start = end
    return groups


def results_json(report: Report) -> bytes:
    head = {
        "schema": RESULTS_SCHEMA, "version": report.source.config.version,
        "source_digest": report.source.digest, "built_at": report.built_at,
        "generator": f"reportgen {__version__}",
    }
    return json_lines(head, {"claims": [c.to_json() for c in report.claims],
                             "findings": [f.to_json() for r in report.runs for f in r.findings]})


def json_lines(head: Mapping[str, object], long: Mapping[str, Sequence[object] | Mapping[str, object]]) -> bytes:
    """A JSON object whose long lists and maps hold one item per line: a line-by-line
    diff of two versions shows the claims that changed, and a claim's evidence list of
    thousands of call ids costs one line, not thousands of indented ones."""

    def dump(value: object) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))

    parts = [f"{dump(k)}: {dump(v)}" for k, v in head.items()]
    for key, items in long.items():
        if isinstance(items, Mapping):
            inner, brackets = [f"  {dump(k)}: {dump(v)}" for k, v in items.items()], "{}"
        else:
            inner, brackets = [f"  {dump(item)}" for item in items], "[]"
        body = "\n" + ",\n".join(inner) + "\n " if inner else ""
        parts.append(f"{dump(key)}: {brackets[0]}{body}{brackets[1]}")
    return ("{\n " + ",\n ".join(parts) + "\n}\n").encode("utf-8")


def artifacts_json(run: RunReport) -> bytes:
    """Per call: each artifact's name, hash and kind; per drawing, how it rendered; so
    verify and diff can follow artifacts without parsing pages. Every raw file is
    published as artifacts/<sha256>.txt."""
    calls = {}
    svgs: set[str] = set()
    for call_id in sorted(run.artifacts):
        entries = []
        for a in run.artifacts[call_id].files:
            entry = {"name": a.name, "sha256": a.sha256, "kind": a.kind}
            if a.derived:
                entry["derived"] = a.derived
            if a.redacted_from:
                entry["redacted_from"] = a.redacted_from
            entries.append(entry)
            if a.kind == "svg":
                svgs.add(a.sha256)
        calls[call_id] = entries
    renders = {}
    for sha in sorted(svgs):
        render = run.renders.get(sha)
        if render is not None:
            renders[sha] = {
                "png": f"artifacts/{render.png_sha256}.png" if render.png else None,
                "sanitized_svg": f"artifacts/{render.safe_svg_sha256}.svg" if render.safe_svg else None,
                "notes": list(render.notes),
            }
    head = {"schema": ARTIFACTS_SCHEMA, "renderer": run.settings.describe(),
            "published_as": "artifacts/<sha256>.txt"}
    return json_lines(head, {"calls": calls, "renders": renders})


def _data_files(run: RunReport) -> dict[str, bytes]:
    vr = run.analysis.run
    rid = vr.contract.id
    files = {
        f"data/{rid}/run.toml": vr.contract.text.encode("utf-8"),
        f"data/{rid}/{vr.log.name}": vr.log_bytes,
    }
    redactions = redactions_json(vr)
    if redactions is not None:
        files[f"data/{rid}/redactions.json"] = redactions
    for hexdigest, data in sorted(vr.requests.items()):
        files[f"data/{rid}/requests/{hexdigest}.json"] = data
    return files


def _artifact_files(run: RunReport) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for bundle in run.artifacts.values():
        for artifact in bundle.files:
            files[f"artifacts/{artifact.published_name}"] = artifact.data
            render = run.renders.get(artifact.sha256) if artifact.kind == "svg" else None
            if render and render.png:
                files[f"artifacts/{render.png_sha256}.png"] = render.png
            if render and render.safe_svg:
                files[f"artifacts/{render.safe_svg_sha256}.svg"] = render.safe_svg
    return files


