"""ExperimentAnalysis -> Claims: every number a page shows, with a stable id, its
method and assumptions, and the call ids it was computed from."""

from __future__ import annotations

import dataclasses

from reportgen.analysis.results import (
    ComparisonResult,
    ExperimentAnalysis,
    GroupAnalysis,
    PairedComparison,
    ServiceResult,
)
from reportgen.claims.claim import Claim
from reportgen.claims.weakens import weakens
from reportgen.model.findings import Finding
from reportgen.model.outcomes import STATUS_LABELS
from reportgen.stats import Estimate, Verdict


def comparison_key(comparison: ComparisonResult) -> str:
    return f"{comparison.candidate}_vs_{comparison.baseline}"


def build_claims(analysis: ExperimentAnalysis, findings: tuple[Finding, ...] = ()) -> tuple[Claim, ...]:
    run_id = analysis.run.contract.id
    claims: list[Claim] = []
    claims += _group_claims(analysis, analysis.overall, prefix=run_id)
    claims += _rank_claims(analysis)
    for block in analysis.blocks:
        claims += _group_claims(analysis, block, prefix=f"{run_id}.block-{block.block}", headline_only=True)
    for sl in analysis.slices:
        claims += _group_claims(analysis, sl.group, prefix=f"{run_id}.slice-{sl.name}", headline_only=True,
                                where=f" in {'pre-registered' if sl.registered else 'exploratory'} slice {sl.name}")
    claims += _change_claims(analysis)
    claims += _retry_claims(analysis)
    flagged = {}
    for flag in analysis.block_flags:
        flagged.setdefault(f"{run_id}.{flag.key}", []).append(flag.message)
    warnings = [f for f in findings if f.severity == "warning"]
    return tuple(
        dataclasses.replace(
            c, findings=tuple(f.id for f in warnings if weakens(f, c.id, run_id)),
            warnings=c.warnings + tuple(flagged.get(c.id.rsplit(".", 1)[0], ()))
            if c.kind in ("difference", "paired_difference") else c.warnings)
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
                  headline_only: bool = False, where: str | None = None) -> list[Claim]:
    run_id = analysis.run.contract.id
    if where is None:
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
    for p in group.paired:
        out += _paired_claims(p, analysis, prefix, where, headline_only)
    return out


def _verdict_claim(claim_id: str, run_id: str, statement: str, v: Verdict, est: Estimate, unit: str,
                   evidence: tuple[str, ...]) -> Claim:
    return Claim(
        id=claim_id, experiment=run_id, kind="decision", statement=statement,
        estimate=est.estimate, low=est.low, high=est.high, confidence_level=est.confidence_level,
        method=est.method, unit=unit, verdict=v.code, verdict_label=v.label,
        verdict_text=v.reason + (f" {v.noninferiority_text}" if v.noninferiority_text else ""),
        assumptions=est.assumptions, warnings=est.warnings, evidence=evidence)


def _paired_claims(p: PairedComparison, analysis: ExperimentAnalysis, prefix: str, where: str,
                   headline_only: bool) -> list[Claim]:
    run_id = analysis.run.contract.id
    key = f"{prefix}.{p.candidate}_vs_{p.baseline}"
    unit = "score" if p.metric == "score" else "rate"
    d = p.difference
    units = "tasks" if p.unit == "task" else "pairs"
    what = "score" if p.metric == "score" else "pass (1) / non-pass (0)"
    mean_of = (f"mean over {d.n} tasks of the difference in task means (over repetitions)" if p.unit == "task"
               else f"mean over {d.n} pairs of the difference")
    out = [Claim(
        id=f"{key}.paired_difference", experiment=run_id, kind="paired_difference",
        statement=f"{p.candidate} minus {p.baseline}, {what}: {mean_of}{where} (Student t interval)",
        estimate=d.estimate, numerator=d.n, low=d.low, high=d.high, confidence_level=d.confidence_level,
        method=d.method, p_value=d.p_value, test="paired-t", unit=unit, assumptions=d.assumptions,
        warnings=d.warnings, evidence=p.evidence)]
    if p.binary is not None:
        m = p.binary.mcnemar
        out.append(Claim(
            id=f"{key}.mcnemar", experiment=run_id, kind="test",
            statement=f"Exact McNemar test, two-sided, of {p.candidate} vs {p.baseline} on the "
            f"{p.binary.only_a + p.binary.only_b} discordant pairs{where}", estimate=m.statistic,
            p_value=m.p_value, test=m.method, method=m.method, assumptions=m.assumptions,
            warnings=m.warnings, evidence=p.evidence))
    if p.bootstrap is not None:
        b = p.bootstrap
        kind = ("hierarchical bootstrap (tasks, then repetitions within tasks)" if p.unit == "task"
                else f"cluster bootstrap over {b.n_clusters} clusters")
        out.append(Claim(
            id=f"{key}.bootstrap", experiment=run_id, kind="paired_difference",
            statement=f"{p.candidate} minus {p.baseline}{where}: {kind}, {b.resamples} resamples, seed {b.seed}",
            estimate=b.estimate, numerator=b.n_clusters, low=b.low, high=b.high,
            confidence_level=b.confidence_level, method=b.method, unit=unit, assumptions=b.assumptions,
            warnings=b.warnings, evidence=p.evidence))
    if headline_only:
        return out
    if p.binary is not None:
        t = p.binary
        for name, count, label in (("both_pass", t.both_pass, "both passed"),
                                   ("only_baseline", t.only_a, f"only {p.baseline} passed"),
                                   ("only_candidate", t.only_b, f"only {p.candidate} passed"),
                                   ("both_fail", t.both_fail, "neither passed")):
            ids = tuple(i for r in p.rows if _cell(r) == name for i in r.candidate_calls + r.baseline_calls)
            out.append(Claim(
                id=f"{key}.pairs.{name}", experiment=run_id, kind="count",
                statement=f"Pairs where {label}, of {t.n}", estimate=float(count), numerator=count,
                denominator=t.n, unit="pairs", evidence=ids))
    if p.row_level is not None:
        r = p.row_level
        out.append(Claim(
            id=f"{key}.row_level", experiment=run_id, kind="paired_difference",
            statement=f"For contrast only, NOT a result: the same difference analysed as if its {r.n} rows "
            f"were {r.n} independent {units}; too narrow, since repetitions of one task are not independent",
            estimate=r.estimate, numerator=r.n, low=r.low, high=r.high, confidence_level=r.confidence_level,
            method=r.method, unit=unit, assumptions=("WRONG for this design: treats repetitions as independent tasks",),
            warnings=r.warnings, evidence=p.evidence))
    out.append(_verdict_claim(
        f"{key}.verdict", run_id, f"Pre-registered decision for {p.candidate} against {p.baseline} "
        f"({'cluster bootstrap' if p.decided_on == 'bootstrap' else 'paired t'} interval)",
        p.verdict, p.decided, unit, p.evidence))
    return out


def _cell(row) -> str:
    if row.baseline is None or row.candidate is None:
        return ""
    return {(1.0, 1.0): "both_pass", (1.0, 0.0): "only_baseline", (0.0, 1.0): "only_candidate",
            (0.0, 0.0): "both_fail"}[(row.baseline, row.candidate)]


def _change_claims(analysis: ExperimentAnalysis) -> list[Claim]:
    run_id = analysis.run.contract.id
    reference = analysis.run.contract.baseline
    out = []
    for ch in analysis.changes:
        span = f"from window {ch.first_window} to window {ch.last_window}"
        c = ch.change
        out.append(Claim(
            id=f"{run_id}.{ch.service}.change", experiment=run_id, kind="difference",
            statement=f"Change in {ch.service}'s first-submission pass rate {span} (last minus first)",
            estimate=c.estimate, low=c.low, high=c.high, confidence_level=c.confidence_level,
            method=c.method, unit="rate", assumptions=c.assumptions, warnings=c.warnings, evidence=ch.evidence))
        out.append(Claim(
            id=f"{run_id}.{ch.service}.change.fisher", experiment=run_id, kind="test",
            statement=f"Fisher exact test, two-sided, of {ch.service}'s pass counts in window {ch.first_window} "
            f"vs window {ch.last_window}", estimate=ch.fisher.statistic, p_value=ch.fisher.p_value,
            test=ch.fisher.method, method=ch.fisher.method, assumptions=ch.fisher.assumptions,
            warnings=ch.fisher.warnings, evidence=ch.evidence))
        if ch.relative is not None:
            r = ch.relative
            out.append(Claim(
                id=f"{run_id}.{ch.service}.change_vs_reference", experiment=run_id, kind="difference",
                statement=f"Change in {ch.service} minus the reference {reference}, {span}: what changed in "
                f"{ch.service} beyond what changed in the reference ({analysis.run.contract.bootstrap_resamples} "
                f"resamples, seed {analysis.run.contract.bootstrap_seed})",
                estimate=r.estimate, low=r.low, high=r.high, confidence_level=r.confidence_level,
                method=r.method, unit="rate", assumptions=r.assumptions, warnings=r.warnings, evidence=ch.evidence))
    return out


def _retry_claims(analysis: ExperimentAnalysis) -> list[Claim]:
    retries = analysis.retries
    if retries is None:
        return []
    run_id = analysis.run.contract.id
    k = retries.budget
    out = [_rate_claim(
        f"{run_id}.{service}.pass_within_{k}_attempts", run_id,
        f"{service}: planned calls that passed within {k} attempts (a separate analysis of later attempts, "
        f"not the first-submission headline)", est, ids) for service, est, ids in retries.services]
    calls = {service: ids for service, _, ids in retries.services}
    for candidate, baseline, d in retries.comparisons:
        out.append(Claim(
            id=f"{run_id}.{candidate}_vs_{baseline}.within_{k}_attempts.difference", experiment=run_id,
            kind="difference", statement=f"Pass rate within {k} attempts of {candidate} minus {baseline} "
            "(later attempts; not the headline)", estimate=d.estimate, low=d.low, high=d.high,
            confidence_level=d.confidence_level, method=d.method, unit="rate", assumptions=d.assumptions,
            warnings=d.warnings, evidence=calls[candidate] + calls[baseline]))
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
    if s.mean_score is not None:
        out.append(Claim(
            id=f"{prefix}.{s.service}.mean_score", experiment=run_id, kind="quantity",
            statement=f"{s.service}: mean score of {len(s.scored_calls)} complete returns (arithmetic mean; "
            "the comparison rests on the paired differences, not on these means)",
            estimate=s.mean_score, numerator=len(s.scored_calls), unit="score", method="mean",
            evidence=s.scored_calls))
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
