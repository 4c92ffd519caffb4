"""ValidatedRun -> ExperimentAnalysis: the statistics of every design.

Headline of a pass/fail run: first-submission pass rate over ALL planned calls (a
timeout or a missing call is a non-pass, never a dropped row); beside it, pass rate
among complete returns. A score run's headline is the mean score of complete returns,
beside how many planned calls completed. Both: technical failures by reason, latency.
The primary comparison is candidate - baseline: two independent samples (rates or
scores in the independent and leaderboard designs, rates in the longitudinal one) or
paired differences (paired, repeated; see paired_analysis). The same analysis runs per
block and per slice; a longitudinal run adds each service's change between its first
and last window; a pass/fail run's later attempts get their own analysis, apart from
the headline.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Mapping

import numpy as np

from reportgen import stats
from reportgen.analysis.block_flags import block_flags
from reportgen.analysis.grading import analyze_grading
from reportgen.analysis.longitudinal import window_changes
from reportgen.analysis.paired import pair_rows, paired_comparison
from reportgen.analysis.ranks import rank_services
from reportgen.analysis.results import (
    ComparisonResult,
    ExperimentAnalysis,
    GroupAnalysis,
    PairRow,
    RankResult,
    ServiceResult,
    SliceAnalysis,
)
from reportgen.analysis.retries import retry_analysis
from reportgen.model.calls import Call
from reportgen.model.config import PAIRED_DESIGNS, RunContract
from reportgen.model.ordering import natural_key
from reportgen.model.outcomes import TECHNICAL_FAILURES
from reportgen.model.source import ValidatedRun
from reportgen.stats.proportions import COMPLETION_ASSUMPTIONS


def analyze_run(run: ValidatedRun) -> ExperimentAnalysis:
    contract = run.contract
    formal = [c for c in run.calls if c.phase == "formal"]
    # Exclusions reach here only under a registered rule (the audit refuses the rest);
    # an excluded call leaves both the numerator and the planned denominator.
    first = [c for c in run.calls if c.counted]
    excluded = Counter(c.service for c in run.calls if c.first_submission and c.excluded)
    planned_total = {s: max(0, n - excluded[s]) for s, n in contract.planned_calls.items()}
    rows = (pair_rows(contract, first, contract.baseline, contract.candidates[0])
            if contract.design == "paired" else None)
    overall = _analyze_group(run, first, None, planned_total, rows=rows)
    ranks: tuple[RankResult, ...] = ()
    if len(contract.candidates) > 1:  # several comparisons: their p-values are adjusted together
        overall = _holm_adjusted(overall, contract)
    if contract.design == "leaderboard":
        ranks = rank_services(overall, contract.confidence_level, contract.metric.scored, contract.higher_is_better)
    blocks = []
    excluded_in = Counter((c.block_id, c.service) for c in run.calls if c.first_submission and c.excluded)
    for block in contract.blocks or sorted({c.block_id for c in first}, key=natural_key):
        in_block = [c for c in first if c.block_id == block]
        planned, notes = _planned_per_block(run, in_block, {s: n for (b, s), n in excluded_in.items() if b == block})
        blocks.append(_analyze_group(run, in_block, block, planned, notes,
                                     rows=None if rows is None else [r for r in rows if r.block == block]))
    return ExperimentAnalysis(
        run=run, overall=overall, blocks=tuple(blocks),
        excluded_pilot=tuple(c.call_id for c in run.calls if c.phase == "pilot"),
        later_attempts=tuple(c.call_id for c in formal if c.attempt > 1), ranks=ranks,
        slices=_slices(run, first, rows), block_flags=block_flags(overall, tuple(blocks)),
        changes=window_changes(run, tuple(blocks)) if contract.design == "longitudinal" else (),
        retries=retry_analysis(run, [c for c in formal if not c.excluded], planned_total),
        grading=analyze_grading(run),
    )


def _slices(run: ValidatedRun, first: list[Call], rows: tuple[PairRow, ...] | None) -> tuple[SliceAnalysis, ...]:
    """Every registered slice (even one with no calls), then every other slice, as exploratory."""
    registered = run.contract.slices
    seen = sorted({c.column("slice") for c in first} - {""} - set(registered))
    out = []
    for name in (*registered, *seen):
        in_slice = [c for c in first if c.column("slice") == name]
        # A plan is per service, not per slice: the slice's denominator is what was logged.
        planned = Counter(c.service for c in in_slice)
        slice_rows = None if rows is None else [r for r in rows if r.slice == name]
        group = _analyze_group(run, in_slice, None, dict(planned), rows=slice_rows)
        n_units = (len(group.paired[0].rows) if group.paired else
                   min((s.first_pass.denominator for s in group.services), default=0))
        out.append(SliceAnalysis(name, name in registered, group, n_units))
    return tuple(out)


def _holm_adjusted(group: GroupAnalysis, contract: RunContract) -> GroupAnalysis:
    """The comparisons' p-values adjusted together (Holm), and each decision read
    against its adjusted p: no direction is claimed that the adjusted test does not show."""
    # A comparison whose test is undefined (a score with fewer than two values on a
    # side) stays in the count k: it was made, it just cannot reject.
    tested = [c for c in group.comparisons if not math.isnan(c.test.p_value)]
    adjusted = dict(zip((c.candidate for c in tested), stats.holm([c.test.p_value for c in tested])))
    k = len(group.comparisons)
    if k == 0:
        return group
    level = 1 - contract.alpha / k  # each decision reads a Bonferroni interval, labelled with its level
    metric = contract.metric
    basis = f"the {level * 100:.4g}% Bonferroni-adjusted {metric.interval_short} interval"
    comparisons = []
    for c in group.comparisons:
        p = adjusted.get(c.candidate, math.nan)
        interval = _difference(group.service(c.baseline), group.service(c.candidate), contract, level).difference
        interval = dataclasses.replace(interval, assumptions=contract.stated(interval.assumptions))
        test = stats.Test(p, contract.alpha, f"the Holm-adjusted {metric.test_family} test over {k} comparisons", "Holm-adjusted p")
        verdict = _verdict(interval, test, contract, bool(group.service(c.candidate).critical_calls), basis)
        comparisons.append(dataclasses.replace(c, adjusted_p_value=None if math.isnan(p) else p,
                                               adjustment="holm", verdict=verdict, decided_on=interval))
    return dataclasses.replace(group, comparisons=tuple(comparisons))


def _planned_per_block(run: ValidatedRun, calls: list[Call], excluded: Mapping[str, int]
                       ) -> tuple[dict[str, int], tuple[str, ...]]:
    """Registered calls per block: the planned total split evenly over the blocks when
    it divides, less the block's calls excluded under a registered rule (as the overall
    rate leaves them out: the blocks' denominators add up to it); otherwise the observed
    count, said so on the page."""
    n_blocks = len(run.contract.blocks)
    planned: dict[str, int] = {}
    notes: list[str] = []
    per_service = Counter(c.service for c in calls)  # once: a leaderboard has 50 services
    for service, total in run.contract.planned_calls.items():
        observed = per_service[service]
        if n_blocks and total % n_blocks == 0:
            planned[service] = max(total // n_blocks - excluded.get(service, 0), observed)
        else:
            planned[service] = observed
            notes.append(f"{service}: the plan does not divide evenly over the blocks, so the "
                         "block's denominator is its observed first submissions")
    return planned, tuple(notes)


def _analyze_group(run: ValidatedRun, calls: list[Call], block: str | None,
                   planned: dict[str, int], notes: tuple[str, ...] = (),
                   rows: list[PairRow] | tuple[PairRow, ...] | None = None) -> GroupAnalysis:
    contract = run.contract
    cl = contract.confidence_level
    by_service: dict[str, list[Call]] = {s.id: [] for s in contract.services}
    for c in calls:  # once, not once per service: a board of 50 services has 100,000 calls
        if c.service in by_service:
            by_service[c.service].append(c)
    services = tuple(
        _service_result(s.id, by_service[s.id], planned.get(s.id, 0), cl,
                        contract.metric.scored, contract.failure_score)
        for s in contract.services
    )
    if contract.design in PAIRED_DESIGNS:
        # Paired rows are compared by their differences, never as two independent rates.
        return GroupAnalysis(block, services, (), notes, (paired_comparison(contract, calls, rows),))
    by_id = {s.service: s for s in services}
    comparisons = []
    base = by_id.get(contract.baseline)
    for candidate in contract.candidates:
        cand = by_id.get(candidate)
        if base is None or cand is None:
            continue
        comparisons.append(_compare(base, cand, contract, cl))
    return GroupAnalysis(block, services, tuple(comparisons), notes)


def _service_result(service: str, calls: list[Call], planned: int, cl: float,
                    with_score: bool = False, failure_score: float | None = None) -> ServiceResult:
    # More rows than planned means the plan was not followed; counting every row keeps
    # the rate a proportion (the audit reports the overrun).
    denominator = max(planned, len(calls))
    passes = sum(1 for c in calls if c.passed)
    complete = [c for c in calls if c.status == "ok"]
    latencies = np.array([c.latency_ms for c in complete if c.latency_ms is not None], dtype=float)
    scored = [c for c in complete if c.score is not None] if with_score else []
    scores = [c.score for c in scored if c.score is not None]
    failures = tuple(
        (status, tuple(c.call_id for c in calls if c.status == status))
        for status in TECHNICAL_FAILURES
        if any(c.status == status for c in calls)
    )
    return ServiceResult(
        service=service, planned=denominator,
        first_calls=tuple(c.call_id for c in calls),
        complete_calls=tuple(c.call_id for c in complete),
        first_pass=stats.wilson(passes, denominator, cl),
        complete_pass=stats.wilson(passes, len(complete), cl),
        n_missing=denominator - len(calls),
        failures=failures,
        latency_median_ms=float(np.median(latencies)) if latencies.size else None,
        latency_p90_ms=float(np.percentile(latencies, 90)) if latencies.size else None,
        critical_calls=tuple(c.call_id for c in calls if c.critical),
        mean_score=float(np.mean(scores)) if scores else None,
        scored_calls=tuple(c.call_id for c in scored),
        score_sd=float(np.std(scores, ddof=1)) if len(scores) > 1 else None,
        completed=dataclasses.replace(stats.wilson(len(complete), denominator, cl),
                                      assumptions=COMPLETION_ASSUMPTIONS) if with_score else None,
        # The paired rule, for independent samples: a planned call without a complete
        # return counts as failure_score when one is registered, else it has no score.
        compared_scores=tuple(scores) + (
            (failure_score,) * (denominator - len(complete)) if failure_score is not None else ()),
    )


def _compare(base: ServiceResult, cand: ServiceResult, contract: RunContract, cl: float) -> ComparisonResult:
    compared = _difference(base, cand, contract, cl)
    # A contract written after the run does not say the comparison was chosen before the data.
    difference = dataclasses.replace(compared.difference, assumptions=contract.stated(compared.difference.assumptions))
    tested = dataclasses.replace(compared.test, assumptions=contract.stated(compared.test.assumptions))
    test = stats.Test(compared.test.p_value, contract.alpha, contract.metric.test_name)
    verdict = _verdict(difference, test, contract, bool(cand.critical_calls))
    return ComparisonResult(base.service, cand.service, difference, tested, verdict,
                            cand.first_calls + base.first_calls, metric=contract.metric)


def _difference(base: ServiceResult, cand: ServiceResult, contract: RunContract,
                cl: float) -> stats.RateComparison | stats.MeanComparison:
    """Candidate minus baseline with the test its interval agrees with: two pass rates
    (Newcombe, Fisher) or, for a score, two independent samples of scores (Welch)."""
    if contract.metric.scored:
        return stats.welch_difference(cand.compared_scores, base.compared_scores, cl)
    c, b = cand.first_pass, base.first_pass
    return stats.compare_rates(c.numerator, c.denominator, b.numerator, b.denominator, cl)


def _verdict(difference: stats.Estimate, test: stats.Test, contract: RunContract, critical: bool,
             basis: str = "the interval") -> stats.Verdict:
    return stats.decide(
        difference.low, difference.high,
        min_useful_effect=contract.min_useful_effect,
        noninferiority_margin=contract.noninferiority_margin,
        critical_failure=contract.block_on_critical and critical,
        higher_is_better=contract.higher_is_better, test=test, basis=basis,
    )
