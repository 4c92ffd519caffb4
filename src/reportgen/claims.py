"""ExperimentAnalysis -> Claims: every number a page shows, with a stable id, its
method and assumptions, and the call ids it was computed from."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

from .audit import Finding, weakens
from .analyze import ComparisonResult, ExperimentAnalysis, GroupAnalysis, ServiceResult
from .outcomes import STATUS_LABELS
from .stats import Estimate

ClaimKind = Literal["rate", "difference", "paired_difference", "test", "decision", "rank",
                    "count", "quantity"]
RESULTS_SCHEMA = "reportgen.results/1"


@dataclass(frozen=True)
class Claim:
    id: str
    experiment: str
    kind: ClaimKind
    statement: str
    estimate: float | None
    numerator: int | None = None
    denominator: int | None = None
    low: float | None = None
    high: float | None = None
    confidence_level: float | None = None
    method: str | None = None
    p_value: float | None = None
    adjusted_p_value: float | None = None
    adjustment: str | None = None
    test: str | None = None
    verdict: str | None = None
    verdict_label: str | None = None
    verdict_text: str | None = None
    unit: str | None = None  # "rate", "ms", "calls", "rank"
    group: int | None = None  # rank claims: the tie group
    assumptions: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()  # ids of audit findings that weaken this claim

    def to_json(self) -> dict[str, Any]:
        interval = None
        if self.low is not None and self.high is not None:
            interval = {"low": self.low, "high": self.high,
                        "confidence_level": self.confidence_level, "method": self.method}
        return {
            "id": self.id, "experiment": self.experiment, "kind": self.kind,
            "statement": self.statement, "estimate": _json_number(self.estimate),
            "numerator": self.numerator, "denominator": self.denominator,
            "interval": interval, "p_value": self.p_value, "adjusted_p_value": self.adjusted_p_value,
            "adjustment": self.adjustment, "test": self.test,
            "verdict": self.verdict, "verdict_label": self.verdict_label,
            "verdict_text": self.verdict_text, "unit": self.unit, "group": self.group,
            "assumptions": list(self.assumptions), "warnings": list(self.warnings),
            "evidence": list(self.evidence), "findings": list(self.findings),
        }


def _json_number(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


def comparison_key(comparison: ComparisonResult) -> str:
    return f"{comparison.candidate}_vs_{comparison.baseline}"


def build_claims(analysis: ExperimentAnalysis, findings: tuple[Finding, ...] = ()) -> tuple[Claim, ...]:
    run_id = analysis.run.contract.id
    claims: list[Claim] = []
    claims += _group_claims(analysis, analysis.overall, prefix=run_id)
    claims += _rank_claims(analysis)
    for block in analysis.blocks:
        claims += _group_claims(analysis, block, prefix=f"{run_id}.block-{block.block}", headline_only=True)
    warnings = [f for f in findings if f.severity == "warning"]
    return tuple(
        dataclasses.replace(c, findings=tuple(f.id for f in warnings if weakens(f, c.id, run_id)))
        for c in claims
    )


RANK_ASSUMPTIONS = (
    "each service's calls are independent, with a stable pass probability",
    "ranks from a parametric bootstrap of every service's pass count at its observed rate",
    "services in one group cannot be told apart from the group's leader: read no order inside a group",
)


def _rank_claims(analysis: ExperimentAnalysis) -> list[Claim]:
    run_id = analysis.run.contract.id
    first = {s.service: s.first_calls for s in analysis.overall.services}
    n = len(analysis.ranks)
    return [Claim(
        id=f"{run_id}.{r.service}.rank", experiment=run_id, kind="rank",
        statement=f"{r.service}: rank of its first-submission pass rate among {n} services, group {r.group} "
        f"({r.resamples} bootstrap resamples, seed {r.seed})",
        estimate=r.rank, low=float(r.low), high=float(r.high), confidence_level=r.confidence_level,
        method="parametric-bootstrap-rank", unit="rank", group=r.group, assumptions=RANK_ASSUMPTIONS,
        evidence=first[r.service]) for r in analysis.ranks]


def _rate_claim(claim_id: str, run_id: str, statement: str, est: Estimate, evidence) -> Claim:
    return Claim(
        id=claim_id, experiment=run_id, kind="rate", statement=statement,
        estimate=est.estimate, numerator=est.numerator, denominator=est.denominator,
        low=est.low, high=est.high, confidence_level=est.confidence_level, method=est.method,
        unit="rate", assumptions=est.assumptions, warnings=est.warnings, evidence=tuple(evidence),
    )


def _group_claims(analysis: ExperimentAnalysis, group: GroupAnalysis, prefix: str,
                  headline_only: bool = False) -> list[Claim]:
    run_id = analysis.run.contract.id
    where = f" in block {group.block}" if group.block is not None else ""
    out: list[Claim] = []
    for s in group.services:
        out.append(_rate_claim(
            f"{prefix}.{s.service}.first_pass_rate", run_id,
            f"{s.service} passed {s.first_pass.numerator} of {s.first_pass.denominator} planned "
            f"first submissions{where}", s.first_pass, s.first_calls))
        if headline_only:
            continue
        out += _service_detail_claims(s, prefix, run_id)
    for c in group.comparisons:
        out += _comparison_claims(c, prefix, run_id, where, headline_only)
    return out


def _service_detail_claims(s: ServiceResult, prefix: str, run_id: str) -> list[Claim]:
    out = [_rate_claim(
        f"{prefix}.{s.service}.complete_pass_rate", run_id,
        f"{s.service} passed {s.complete_pass.numerator} of its {s.complete_pass.denominator} "
        "complete returns", s.complete_pass, s.complete_calls)]
    n_failed = sum(len(ids) for _, ids in s.failures)
    out.append(Claim(
        id=f"{prefix}.{s.service}.technical_failures", experiment=run_id, kind="count",
        statement=f"{s.service} had {n_failed} technical failures among {len(s.first_calls)} "
        "logged first submissions", estimate=float(n_failed), numerator=n_failed,
        denominator=len(s.first_calls), unit="calls",
        evidence=tuple(i for _, ids in s.failures for i in ids)))
    for status, ids in s.failures:
        out.append(Claim(
            id=f"{prefix}.{s.service}.technical_failures.{status}", experiment=run_id, kind="count",
            statement=f"{s.service}: {len(ids)} first submissions {STATUS_LABELS[status]}",
            estimate=float(len(ids)), numerator=len(ids), denominator=len(s.first_calls),
            unit="calls", evidence=ids))
    if s.n_missing:
        out.append(Claim(
            id=f"{prefix}.{s.service}.missing_calls", experiment=run_id, kind="count",
            statement=f"{s.service}: {s.n_missing} planned first submissions have no row in the "
            "log and count as non-passes", estimate=float(s.n_missing), unit="calls"))
    for name, value, label in (("latency_median_ms", s.latency_median_ms, "median"),
                               ("latency_p90_ms", s.latency_p90_ms, "90th percentile")):
        if value is None:
            continue
        out.append(Claim(
            id=f"{prefix}.{s.service}.{name}", experiment=run_id, kind="quantity",
            statement=f"{s.service}: {label} latency of {len(s.complete_calls)} complete returns",
            estimate=value, unit="ms", method="median" if label == "median" else "percentile-linear",
            evidence=s.complete_calls))
    return out


def _comparison_claims(c: ComparisonResult, prefix: str, run_id: str, where: str,
                       headline_only: bool) -> list[Claim]:
    key = f"{prefix}.{comparison_key(c)}"
    d, f = c.difference, c.fisher
    out = [
        Claim(
            id=f"{key}.difference", experiment=run_id, kind="difference",
            statement=f"First-submission pass rate of {c.candidate} minus {c.baseline}{where}",
            estimate=d.estimate, low=d.low, high=d.high, confidence_level=d.confidence_level,
            method=d.method, unit="rate", assumptions=d.assumptions, warnings=d.warnings,
            evidence=c.evidence),
        Claim(
            id=f"{key}.fisher", experiment=run_id, kind="test",
            statement=f"Fisher exact test, two-sided, of {c.candidate} vs {c.baseline} "
            f"pass / non-pass counts{where}", estimate=f.statistic, p_value=f.p_value,
            adjusted_p_value=c.adjusted_p_value, adjustment=c.adjustment,
            test=f.method, method=f.method, assumptions=f.assumptions, warnings=f.warnings,
            evidence=c.evidence),
    ]
    if not headline_only:
        v = c.verdict
        out.append(Claim(
            id=f"{key}.verdict", experiment=run_id, kind="decision",
            statement=f"Pre-registered decision for {c.candidate} against {c.baseline}",
            estimate=d.estimate, low=d.low, high=d.high, confidence_level=d.confidence_level,
            method=d.method, unit="rate", verdict=v.code, verdict_label=v.label,
            verdict_text=v.reason + (f" {v.noninferiority_text}" if v.noninferiority_text else ""),
            assumptions=d.assumptions, evidence=c.evidence))
    return out
