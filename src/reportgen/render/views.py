"""What templates read about a run, a service and a call: typed, frozen views made once
per build, so templates ask for what they need rather than compute it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from reportgen.analysis.results import ExperimentAnalysis, ServiceResult
from reportgen.claims.claim import Claim
from reportgen.audit.model_identity import served_as
from reportgen.model.artifacts import Artifact, Render, RenderSettings
from reportgen.model.calls import Call
from reportgen.model.claim_keys import ClaimKey, Pair, Subject, subject_of
from reportgen.model.config import RunContract, Service
from reportgen.model.findings import Finding
from reportgen.model.measures import Measure
from reportgen.model.metric import PrimaryMetric
from reportgen.model.outcomes import ShownOutcome
from reportgen.render.findings_view import FindingLine, finding_lines
from reportgen.render.harness import HarnessLine, harness_lines
from reportgen.render.report import RunReport
from reportgen.render.text_runs import first_line, holds_drawings, response_file
from reportgen.render.shared import FROM_ROOT, RunSheets
from reportgen.render.sheets import CallLinks, call_link
from reportgen.model.numbers import counted

if TYPE_CHECKING:  # charts imports altair and pandas: a second, which pages never need
    from reportgen.render.charts import Chart


# What the templates read about runs, services and calls. Attributes, not dict keys: a
# template's ``call.page`` on a dict first fails as an attribute (an exception), and a
# call page reads some twenty of them, 100,000 pages over.
@dataclass(frozen=True, slots=True)
class CallView:
    call: Call
    svg: Artifact | None
    render: Render | None
    sheet: str  # its sheet, from the version root: ../store/<sheet>.html
    counted: bool  # in the first-submission metrics
    outcome: ShownOutcome  # as pages show it (a score run's complete returns are scored)
    outcome_text: str  # its outcome as pages name it, with the status when not ok
    text_run: bool = False  # its run holds no drawing: its output is text
    response: Artifact | None = None  # in a text run, the response file its first line is read from

    @property
    def page(self) -> str:
        """Its place on its sheet, from the version root: ../store/<sheet>.html#<anchor>
        (made when a page links it: held, a string a call)."""
        return call_link(self.sheet, self.call.call_id)

    @property
    def first_line(self) -> str:
        """A text run's output as a call list shows it: the response's first non-blank line,
        shortened; "empty response" or "no response" when there is none."""
        return first_line(self.response)


@dataclass(frozen=True, slots=True)
class ServiceView:
    id: str
    service: Service
    result: ServiceResult
    calls: tuple[CallView, ...]
    findings: tuple[Finding, ...] = ()  # audit findings that weaken a claim about this service
    sheets: tuple[SheetLink, ...] = ()
    finding_lines: tuple[FindingLine, ...] = ()  # its findings, summarised
    # The dated snapshots that served its requested alias, with their calls (most first).
    served_as: tuple[tuple[str, int], ...] = ()

    @property
    def served_as_text(self) -> str:
        """"served as gpt-4o-mini-2024-07-18", or each snapshot with its calls when several did."""
        if len(self.served_as) == 1:
            return f"served as {self.served_as[0][0]}"
        return "served as " + " and ".join(f"{m} ({counted(n, 'call')})" for m, n in self.served_as)


@dataclass(frozen=True, slots=True)
class SheetLink:
    """One sheet of a service's calls: its first and last call's places, and its link."""

    first: int
    last: int
    href: str
    calls: tuple[str, ...]  # the ids of its calls, in order


@dataclass(frozen=True, slots=True)
class RunView:
    id: str
    contract: RunContract
    analysis: ExperimentAnalysis
    services: tuple[ServiceView, ...]
    calls: tuple[CallView, ...]
    settings: RenderSettings
    contract_text: str
    log_name: str
    log_unit: str  # what a call's place in the log is counted in: "line", or "row" in Parquet
    renderer: str  # the renderer's settings in short
    findings: tuple[Finding, ...]
    finding_lines: tuple[FindingLine, ...]  # the findings, summarised one line per kind
    charts: tuple[Chart, ...]
    claims: Mapping[ClaimKey, Claim]
    pages: CallLinks  # each call's place on its sheet, from the version root, by call id
    by_id: Mapping[str, CallView]
    drawings: bool = True  # some call holds a drawing (else a text run: no word of drawings or renders)

    def page(self, call_id: str) -> str:
        return self.pages[call_id]

    @property
    def harness_lines(self) -> tuple[HarnessLine, ...]:
        """The harness's own number per service, beside the headline (imported runs)."""
        return harness_lines(self.contract, self.analysis.run.calls)

    @property
    def metric(self) -> PrimaryMetric:
        """How the run's comparison is named on its pages (``quantity``, ``interval``,
        ``test``...), which claims show it (``value_key``, ``test_key``) and its numbers."""
        return self.contract.metric

    def claim(self, subject: Subject | tuple[str, str] | object, measure: Measure | str, detail: object = None,
              block: str | None = None, slice: str | None = None) -> Claim | None:
        """The claim templates ask for: about a service id, or a comparison (a pair of
        ids, or a result with candidate and baseline); None when the run has none. A
        measure no claim can have is an error (ValueError), not a missing claim."""
        if isinstance(subject, tuple):
            subject = Pair(*subject)
        key = ClaimKey(self.id, subject_of(subject), Measure(measure), block, slice,
                       None if detail is None else str(detail))
        return self.claims.get(key)


def run_view(run: RunReport, shared: RunSheets) -> RunView:
    """What the templates need about one run, computed once per page set; ``shared``,
    its sheets as the store holds them."""
    pages = shared.hrefs
    analysis = run.analysis
    vr = analysis.run
    contract = vr.contract
    calls = []
    text_run = not holds_drawings(run)
    scored = contract.metric.scored
    for call in vr.calls:
        bundle = run.artifacts.get(call.call_id)
        svg = bundle.first("svg") if bundle else None
        outcome, text = call.shown_outcome(scored)
        calls.append(CallView(
            call=call, svg=svg, render=run.renders.get(svg.sha256) if svg else None,
            sheet=pages.sheet_of[call.call_id], counted=call.counted, outcome=outcome, outcome_text=text,
            text_run=text_run, response=response_file(bundle) if text_run and bundle else None,
        ))
    by_service: dict[str, list[CallView]] = {}
    for view in calls:
        by_service.setdefault(view.call.service, []).append(view)
    touching = _findings_by_service(run)
    served = served_as(vr.calls)
    sheets: dict[str, list[SheetLink]] = {}
    for place, name in zip(shared.places, shared.pages):
        sheets.setdefault(place.service, []).append(
            SheetLink(place.first, place.last, FROM_ROOT + name, tuple(c.call_id for c in place.calls)))
    services = tuple(ServiceView(s.id, s, analysis.overall.service(s.id), tuple(by_service.get(s.id, ())),
                                 touching.get(s.id, ()), tuple(sheets.get(s.id, ())),
                                 finding_lines(touching.get(s.id, ()), across_services=False),
                                 served.get(s.id, ()))
                     for s in contract.services)
    return RunView(
        id=contract.id, contract=contract, analysis=analysis, services=services, calls=tuple(calls),
        settings=run.settings, contract_text=contract.text, log_name=vr.log.name,
        log_unit="row" if vr.log.name.endswith(".parquet") else "line", renderer=run.settings.short(),
        findings=run.findings, finding_lines=finding_lines(run.findings), charts=run.charts, claims={c.key: c for c in run.claims}, pages=pages,
        by_id={v.call.call_id: v for v in calls}, drawings=not text_run,
    )


def _findings_by_service(run: RunReport) -> dict[str, tuple[Finding, ...]]:
    """Each service's findings: those that weaken a claim about it, or about its own
    comparison with the baseline (the claims already carry which findings weaken them),
    in the audit's order. A comparison's findings are the candidate's, not the baseline's:
    on a board of twelve, the baseline's page would otherwise list everyone's."""
    ids: dict[str, set[str]] = {}
    for claim in run.claims:
        if claim.findings:
            subject = claim.key.subject
            service = subject.candidate if isinstance(subject, Pair) else subject
            ids.setdefault(service, set()).update(claim.findings)
    return {service: tuple(f for f in run.findings if f.id in found) for service, found in ids.items()}


class CallsByRun(Mapping[tuple[str, str], CallView]):
    """Every run's calls, by (run id, call id): the templates' ``calls``. Looked up in each
    run's own index (``RunView.by_id``): a dict of its own, with a key made for each call,
    held another 100 MB through the pages of a million calls."""

    __slots__ = ("runs",)

    def __init__(self, views: Sequence[RunView]) -> None:
        self.runs: dict[str, Mapping[str, CallView]] = {v.id: v.by_id for v in views}

    def __getitem__(self, key: tuple[str, str]) -> CallView:
        try:
            run_id, call_id = key
        except (TypeError, ValueError):
            raise KeyError(key) from None
        return self.runs[run_id][call_id]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return ((run_id, call_id) for run_id, calls in self.runs.items() for call_id in calls)

    def __len__(self) -> int:
        return sum(len(calls) for calls in self.runs.values())
