"""How a run's outcomes were graded, and how far its graders and its judge agree.

With blind grades (the run's ``grades/`` folder): the graders' agreement on the items
every one of them graded (Cohen's kappa for two, Fleiss' for more). With a judge column
and blind human grades: each service's calibration subset (calls both graded), the
judge's sensitivity and specificity there, its pass rate over every judged call and that
rate corrected for its errors (Rogan–Gladen), and the corrected comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from reportgen.model.calls import Call
from reportgen.model.grading import GRADES, Grading
from reportgen.model.source import ValidatedRun
from reportgen.stats import Estimate, RateEstimate, wilson
from reportgen.stats.agreement import (
    agreement_table,
    cohen_kappa,
    corrected_difference,
    fleiss_kappa,
    judge_rate,
    rogan_gladen,
    rogan_gladen_variance,
    two_sided_z,
)

# Below this many human passes (or fails) in a service's subset, or with a Wilson
# interval wider than this, the judge's error rate is not bounded well enough to
# correct a comparison with.
MIN_CALIBRATION = 10
MAX_WIDTH = 0.30
# A difference between services in the judge's sensitivity or specificity this large
# is reported as differential misclassification.
DIFFERENTIAL = 0.10


@dataclass(frozen=True)
class GraderAgreement:
    graders: tuple[str, ...]
    kappa: Estimate
    items: tuple[str, ...]  # call ids every grader graded
    disagreements: tuple[str, ...]  # call ids the graders did not all grade alike


@dataclass(frozen=True)
class JudgeService:
    """The judge on one service's calls."""

    service: str
    sensitivity: RateEstimate  # judged pass among the subset's human passes
    specificity: RateEstimate  # judged fail among the subset's human fails
    positives: tuple[str, ...]  # the subset's human passes
    negatives: tuple[str, ...]
    judged: tuple[str, ...]  # counted complete returns the judge graded
    judge_pass: RateEstimate  # the judge's pass rate over them
    corrected: Estimate  # Rogan–Gladen
    variance: float | None  # the corrected rate's delta-method variance (None: not estimable)


@dataclass(frozen=True)
class CorrectedComparison:
    candidate: str
    baseline: str
    difference: Estimate
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class JudgeCalibration:
    column: str
    services: tuple[JudgeService, ...]
    agreement: Estimate  # judge vs the resolved human grade, Cohen's kappa (pass/fail)
    subset: tuple[str, ...]  # every call in a calibration subset
    comparisons: tuple[CorrectedComparison, ...]
    differential: tuple[str, ...]  # warnings: the judge errs differently between services compared
    too_small: tuple[str, ...]  # warnings: the subset does not bound its error rates

    def service(self, service_id: str) -> JudgeService | None:
        return next((s for s in self.services if s.service == service_id), None)


@dataclass(frozen=True)
class GradingAnalysis:
    grading: Grading
    n_items: int  # items in the key
    n_graded: int  # calls with at least one blind grade
    agreement: GraderAgreement | None
    judge: JudgeCalibration | None
    n_filled: int  # calls whose outcome the blind grades filled (primary = "human")
    # primary = "human": counted complete returns with no settled blind grade, which keep the log's grade
    ungraded: tuple[str, ...] = ()


def analyze_grading(run: ValidatedRun) -> GradingAnalysis | None:
    grading = run.grading
    if grading.blind is None and grading.judge is None:
        return None
    counted = [c for c in run.calls if c.counted]
    blind = grading.blind
    agreement = _agreement(run, blind.graders, counted) if blind is not None and len(blind.graders) > 1 else None
    judge = _calibration(run, counted) if grading.judge is not None and blind is not None else None
    graded = [c for c in run.calls if c.grades is not None]
    filled = sum(1 for c in graded if grading.rules.primary == "human" and c.status == "ok"
                 and c.grades is not None and c.grades.resolved is not None)
    ungraded = tuple(c.call_id for c in counted if grading.rules.primary == "human" and c.status == "ok"
                     and (c.grades is None or c.grades.resolved is None))
    return GradingAnalysis(grading, len(blind.key) if blind else 0, len(graded), agreement, judge, filled, ungraded)


def _agreement(run: ValidatedRun, graders: tuple[str, ...], counted: Sequence[Call]) -> GraderAgreement:
    """Agreement on the counted calls every grader graded."""
    rows = []
    for call in counted:
        if call.grades is None:
            continue
        by_grader = {g.grader: g.grade for g in call.grades.grades}
        if all(name in by_grader for name in graders):
            rows.append((call.call_id, [by_grader[name] for name in graders]))
    items = tuple(cid for cid, _ in rows)
    disagreements = tuple(cid for cid, grades in rows if len(set(grades)) > 1)
    level = run.contract.confidence_level
    if len(graders) == 2:
        table = agreement_table([g[0] for _, g in rows], [g[1] for _, g in rows], GRADES)
        kappa = cohen_kappa(table, level)
    else:
        counts = np.array([[grades.count(k) for k in GRADES] for _, grades in rows]).reshape(len(rows), len(GRADES))
        kappa = fleiss_kappa(counts, level, run.contract.bootstrap_resamples, run.contract.bootstrap_seed)
    return GraderAgreement(graders, kappa, items, disagreements)


def _calibration(run: ValidatedRun, counted: Sequence[Call]) -> JudgeCalibration:
    judge = run.grading.judge
    assert judge is not None and run.grading.rules.judge_column is not None
    contract = run.contract
    level = contract.confidence_level
    services = []
    pairs: list[tuple[str, str]] = []
    for service in contract.services:
        mine = [c for c in counted if c.service == service.id and c.status == "ok" and c.call_id in judge]
        subset = [c for c in mine if c.grades is not None and c.grades.resolved in ("pass", "fail")]
        pos = [c for c in subset if c.grades is not None and c.grades.resolved == "pass"]
        neg = [c for c in subset if c.grades is not None and c.grades.resolved == "fail"]
        tp, tn = sum(judge[c.call_id] for c in pos), sum(not judge[c.call_id] for c in neg)
        passes = sum(judge[c.call_id] for c in mine)
        corrected = rogan_gladen(passes, len(mine), tp, len(pos), tn, len(neg), level)
        variance = None
        if corrected.is_defined:
            youden = tp / len(pos) + tn / len(neg) - 1
            variance = rogan_gladen_variance(corrected.estimate, youden, (passes, len(mine)), (tp, len(pos)),
                                             (tn, len(neg)), two_sided_z(level))
        services.append(JudgeService(
            service.id, judge_rate(tp, len(pos), level), judge_rate(tn, len(neg), level),
            tuple(c.call_id for c in pos), tuple(c.call_id for c in neg), tuple(c.call_id for c in mine),
            wilson(passes, len(mine), level), corrected, variance))
        pairs += [(cand, contract.baseline) for cand in contract.candidates if cand == service.id]
    by_id = {s.service: s for s in services}
    comparisons = tuple(_corrected_comparison(by_id[c], by_id[b], level) for c, b in pairs
                        if c in by_id and b in by_id)
    calibrated = tuple(i for s in services for i in s.positives + s.negatives)
    inside = set(calibrated)
    human = [(judge[c.call_id], c.grades.resolved == "pass") for c in counted
             if c.call_id in inside and c.grades is not None]
    agreement = cohen_kappa(agreement_table(["pass" if j else "fail" for j, _ in human],
                                            ["pass" if h else "fail" for _, h in human], ("pass", "fail")), level)
    return JudgeCalibration(run.grading.rules.judge_column, tuple(services), agreement, calibrated, comparisons,
                            tuple(w for c, b in pairs if c in by_id and b in by_id
                                  for w in _differential(by_id[c], by_id[b])),
                            _too_small(services))


def _corrected_comparison(candidate: JudgeService, baseline: JudgeService, level: float) -> CorrectedComparison:
    difference = corrected_difference(candidate.corrected, baseline.corrected, candidate.variance or 0.0,
                                      baseline.variance or 0.0, level)
    return CorrectedComparison(candidate.service, baseline.service, difference, candidate.judged + baseline.judged)


def _differential(candidate: JudgeService, baseline: JudgeService) -> list[str]:
    """A warning for each error rate of the judge that differs between the two services."""
    out = []
    for name, a, b in (("sensitivity", candidate.sensitivity, baseline.sensitivity),
                       ("specificity", candidate.specificity, baseline.specificity)):
        if a.is_defined and b.is_defined and abs(a.estimate - b.estimate) >= DIFFERENTIAL:
            out.append(
                f"differential misclassification: the judge's {name} is {a.estimate:.0%} on {candidate.service} "
                f"({a.numerator}/{a.denominator}) but {b.estimate:.0%} on {baseline.service} "
                f"({b.numerator}/{b.denominator}): part of a difference between judge-graded rates may be the "
                "judge's, not the services'")
    return out


def _too_small(services: Sequence[JudgeService]) -> tuple[str, ...]:
    """One warning naming every error rate the calibration subset does not bound."""
    loose = []
    for s in services:
        for name, rate, what in (("sensitivity", s.sensitivity, "passes"), ("specificity", s.specificity, "fails")):
            if rate.denominator < MIN_CALIBRATION or rate.high - rate.low > MAX_WIDTH:
                loose.append(f"{s.service} {name} from {rate.denominator} human {what} "
                             f"({rate.low:.0%} to {rate.high:.0%})")
    if not loose:
        return ()
    return ("the calibration subset is too small to bound the judge's error rates: " + "; ".join(loose)
            + f" (each needs at least {MIN_CALIBRATION} calls and an interval narrower than {MAX_WIDTH:.0%})",)
