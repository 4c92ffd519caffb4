"""ExperimentAnalysis -> Claims: every number a page shows, with a structured key, its
typed result and the call ids it was computed from."""

from __future__ import annotations

import dataclasses

from reportgen.analysis.cautions import exploratory_caution, reference_gap_caution, reference_gaps
from reportgen.analysis.results import ComparisonResult, ExperimentAnalysis, GroupAnalysis, ServiceResult
from reportgen.claims.claim import Claim, Count, Decision, Quantity, Tested
from reportgen.claims.designs import change_claims, paired_claims, rank_claims, retry_claims
from reportgen.claims.grading import grading_claims, judge_flags
from reportgen.claims.scope import Scope
from reportgen.claims.weakens import weakens
from reportgen.model.claim_keys import Pair, Subject
from reportgen.model.findings import Finding
from reportgen.model.measures import Measure, Unit
from reportgen.model.numbers import counted
from reportgen.model.outcomes import STATUS_LABELS

# Claims a block flag warns about: the overall difference of the flagged comparison, in
# every form the page shows it (the retry analysis is another question).
FLAGGED_MEASURES = (Measure.DIFFERENCE, Measure.PAIRED_DIFFERENCE, Measure.BOOTSTRAP, Measure.ROW_LEVEL)
# Claims of an exploratory slice that a p-value or an interval of a comparison shows.
SLICE_MEASURES = (Measure.DIFFERENCE, Measure.FISHER, Measure.WELCH, Measure.PAIRED_DIFFERENCE, Measure.MCNEMAR,
                  Measure.BOOTSTRAP, Measure.SIGN_FLIP)
# Claims a reference missing from later windows weakens: the pooled comparison, and the
# change of a service measured against the reference.
POOLED_MEASURES = (Measure.DIFFERENCE, Measure.FISHER, Measure.VERDICT, Measure.CHANGE_VS_REFERENCE)


def build_claims(analysis: ExperimentAnalysis, findings: tuple[Finding, ...] = ()) -> tuple[Claim, ...]:
    run_id = analysis.run.contract.id
    claims: list[Claim] = []
    claims += _group_claims(analysis, analysis.overall, Scope(run_id))
    claims += rank_claims(analysis)
    for block in analysis.blocks:
        claims += _group_claims(analysis, block, Scope(run_id, block=block.block, where=f" in block {block.block}"),
                                headline_only=True)
    for sl in analysis.slices:
        kind = "pre-registered" if sl.registered else "exploratory"
        claims += _group_claims(analysis, sl.group, Scope(run_id, slice=sl.name, where=f" in {kind} slice {sl.name}"),
                                headline_only=True)
    claims += change_claims(analysis)
    claims += retry_claims(analysis)
    claims += grading_claims(analysis)
    flagged: dict[Subject, list[str]] = {}
    for flag in analysis.block_flags:
        flagged.setdefault(flag.pair, []).append(flag.message)
    warnings = [f for f in findings if f.severity == "warning"]
    cautions = _Cautions(analysis)
    return tuple(
        dataclasses.replace(c, findings=tuple(f.id for f in warnings if weakens(f, c.key)),
                            flags=(tuple(flagged.get(c.key.subject, ())) if _flaggable(c) else ()) + cautions.of(c)
                            + c.flags + judge_flags(analysis.grading, c.key))
        for c in claims
    )


class _Cautions:
    """The cautions of the run (computed once), and which claims they weaken."""

    def __init__(self, analysis: ExperimentAnalysis) -> None:
        self.exploratory = exploratory_caution(analysis)
        self.registered = {s.name for s in analysis.slices if s.registered}
        self.gaps = {candidate: reference_gap_caution(analysis, candidate, windows)
                     for candidate, windows in reference_gaps(analysis).items()}

    def of(self, claim: Claim) -> tuple[str, ...]:
        key = claim.key
        if key.slice is not None:
            explored = key.measure in SLICE_MEASURES and key.slice not in self.registered
            return (self.exploratory,) if explored and self.exploratory else ()
        if key.block is not None or key.measure not in POOLED_MEASURES or not self.gaps:
            return ()
        subject = key.subject.candidate if isinstance(key.subject, Pair) else key.subject
        if key.measure == Measure.CHANGE_VS_REFERENCE or isinstance(key.subject, Pair):
            return (self.gaps[subject],) if subject in self.gaps else ()
        return ()


def _flaggable(claim: Claim) -> bool:
    return claim.key.is_overall and claim.key.is_comparison and claim.key.measure in FLAGGED_MEASURES


def _group_claims(analysis: ExperimentAnalysis, group: GroupAnalysis, scope: Scope,
                  headline_only: bool = False) -> list[Claim]:
    out: list[Claim] = []
    # A score run's calls are scored, not passed or failed: the score, not ``qualified``,
    # is their outcome (an imported score run's ``qualified`` only says the evaluation
    # completed: 841 completed calls are not "841 of 841 passed"). Its claims are the
    # completions, the scores and the comparisons of the scores.
    scored = analysis.run.contract.metric.scored
    for s in group.services:
        if not scored:
            out.append(Claim(
                scope.key(s.service, Measure.FIRST_PASS_RATE), "rate",
                f"{s.service} passed {s.first_pass.numerator} of {s.first_pass.denominator} planned "
                f"first submissions{scope.where}", s.first_pass, Unit.RATE, s.first_calls))
        if not headline_only:
            out += _service_detail_claims(s, scope, bool(group.paired), scored)
        elif s.mean_score is not None:  # a score run's blocks and slices show their mean scores
            out.append(_mean_score_claim(s, scope, bool(group.paired)))
    for c in group.comparisons:
        out += _comparison_claims(c, scope, headline_only, analysis.run.contract.decision_title)
    for p in group.paired:
        out += paired_claims(p, scope, headline_only, analysis.run.contract.decision_title)
    return out


def _service_detail_claims(s: ServiceResult, scope: Scope, paired: bool, scored: bool) -> list[Claim]:
    out = [] if scored else [Claim(
        scope.key(s.service, Measure.COMPLETE_PASS_RATE), "rate",
        f"{s.service} passed {s.complete_pass.numerator} of its "
        f"{counted(s.complete_pass.denominator, 'complete return')}",
        s.complete_pass, Unit.RATE, s.complete_calls)]
    failed = tuple(i for _, ids in s.failures for i in ids)
    out.append(Claim(
        scope.key(s.service, Measure.TECHNICAL_FAILURES), "count",
        f"{s.service} had {len(failed)} technical failures among {len(s.first_calls)} logged first submissions",
        Count(len(failed), len(s.first_calls), "matched" if failed else "counted_over"), Unit.CALLS,
        failed or s.first_calls))
    for status, ids in s.failures:
        out.append(Claim(
            scope.key(s.service, Measure.TECHNICAL_FAILURES, status), "count",
            f"{s.service}: {len(ids)} first submissions {STATUS_LABELS[status]}",
            Count(len(ids), len(s.first_calls)), Unit.CALLS, ids))
    if s.n_missing:
        out.append(Claim(
            scope.key(s.service, Measure.MISSING_CALLS), "count",
            f"{s.service}: {counted(s.n_missing, 'planned first submission')} "
            f"{'has' if s.n_missing == 1 else 'have'} no row in the log and "
            f"{'counts' if s.n_missing == 1 else 'count'} as {'not complete' if scored else 'non-passes'}",
            Count(s.n_missing, evidence_is="counted_over"), Unit.CALLS, s.first_calls))
    if s.completed is not None:
        out.append(Claim(
            scope.key(s.service, Measure.COMPLETED), "rate",
            f"{s.service} returned a complete answer to {s.completed.numerator} of {s.completed.denominator} "
            f"planned first submissions{scope.where}", s.completed, Unit.RATE, s.first_calls))
    if s.mean_score is not None:
        out.append(_mean_score_claim(s, scope, paired))
    if s.score_sd is not None:
        out.append(Claim(
            scope.key(s.service, Measure.SCORE_SD), "quantity",
            f"{s.service}: sample standard deviation (n − 1) of the scores of "
            f"{counted(len(s.scored_calls), 'complete return')}",
            Quantity(s.score_sd, "sample-sd", len(s.scored_calls)), Unit.SCORE, s.scored_calls))
    for name, value, label, method in (
            (Measure.LATENCY_MEDIAN_MS, s.latency_median_ms, "median", "median"),
            (Measure.LATENCY_P90_MS, s.latency_p90_ms, "90th percentile", "percentile-linear")):
        if value is not None:
            out.append(Claim(
                scope.key(s.service, name), "quantity",
                f"{s.service}: {label} latency of {counted(len(s.complete_calls), 'complete return')}",
                Quantity(value, method), Unit.MS, s.complete_calls))
    return out


def _mean_score_claim(s: ServiceResult, scope: Scope, paired: bool) -> Claim:
    assert s.mean_score is not None
    why = "; the comparison rests on the paired differences, not on these means" if paired else ""
    return Claim(
        scope.key(s.service, Measure.MEAN_SCORE), "quantity",
        f"{s.service}: mean score of {counted(len(s.scored_calls), 'complete return')}{scope.where} "
        f"(arithmetic mean{why})",
        Quantity(s.mean_score, "mean", len(s.scored_calls)), Unit.SCORE, s.scored_calls)


def _comparison_claims(c: ComparisonResult, scope: Scope, headline_only: bool, decision: str) -> list[Claim]:
    pair = Pair(c.candidate, c.baseline)
    m = c.metric
    unit = m.unit
    samples = f" (independent samples, {m.interval_short} interval)" if m.scored else ""
    out = [
        Claim(scope.key(pair, Measure.DIFFERENCE), "difference",
              f"{m.quantity.capitalize()} of {c.candidate} minus {c.baseline}{scope.where}{samples}",
              c.difference, unit, c.evidence),
        Claim(scope.key(pair, m.test_key), "test",
              f"{m.test}, of {c.candidate} vs {c.baseline} {m.compared}{scope.where}",
              Tested(c.test, c.adjusted_p_value, c.adjustment, rows=(c.candidate, c.baseline)), None,
              c.evidence),
    ]
    if not headline_only:
        read_on = ""
        if c.decided_on is not None:
            level = f"{c.decided_on.confidence_level * 100:.4g}%"
            read_on = f", read on the {level} interval (Bonferroni-adjusted for the run's comparisons)"
        out.append(Claim(scope.key(pair, Measure.VERDICT), "decision",
                         f"{decision} for {c.candidate} against {c.baseline}{read_on}",
                         Decision(c.verdict, c.decision_interval), unit, c.evidence))
    return out
