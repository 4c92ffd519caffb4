"""Claims about how a run was graded: the graders' agreement, the judge's sensitivity and
specificity per service, its agreement with the humans, and the pass rates corrected
for its errors; each linked to the calls it was computed from."""

from __future__ import annotations

from reportgen.analysis.grading import GradingAnalysis, JudgeCalibration
from reportgen.analysis.results import ExperimentAnalysis
from reportgen.claims.claim import Claim
from reportgen.model.claim_keys import ClaimKey, Pair
from reportgen.model.measures import Measure, Unit

GRADERS = "graders"  # the subject of the graders' agreement
JUDGE = "judge"  # the subject of the judge's agreement with the humans
# The comparison's own claims that a judge which errs differently per service weakens,
# when the outcomes are the judge's (primary = "logged").
JUDGED_MEASURES = (Measure.DIFFERENCE,)


def grading_claims(analysis: ExperimentAnalysis) -> list[Claim]:
    grading = analysis.grading
    if grading is None:
        return []
    run_id = analysis.run.contract.id
    out: list[Claim] = []
    agreement = grading.agreement
    if agreement is not None:
        names = ", ".join(agreement.graders)
        out.append(Claim(
            ClaimKey(run_id, GRADERS, Measure.GRADER_AGREEMENT), "agreement",
            f"Agreement of {len(agreement.graders)} blind graders ({names}) beyond chance on the "
            f"{len(agreement.items)} counted calls all of them graded "
            f"({'Cohen' if len(agreement.graders) == 2 else 'Fleiss'}'s kappa; "
            f"{len(agreement.disagreements)} graded differently)",
            agreement.kappa, Unit.KAPPA, agreement.items))
    if grading.judge is not None:
        out += _judge_claims(run_id, grading.judge)
    return out


def _judge_claims(run_id: str, judge: JudgeCalibration) -> list[Claim]:
    out = [Claim(
        ClaimKey(run_id, JUDGE, Measure.JUDGE_AGREEMENT), "agreement",
        f"Agreement beyond chance of the judge ({judge.column}) with the blind human grade on the "
        f"{len(judge.subset)} calls of the calibration subset (Cohen's kappa, pass/fail)",
        judge.agreement, Unit.KAPPA, judge.subset)]
    for s in judge.services:
        out += [
            Claim(ClaimKey(run_id, s.service, Measure.JUDGE_SENSITIVITY), "rate",
                  f"{s.service}: the judge passed {s.sensitivity.numerator} of the {s.sensitivity.denominator} "
                  "calls of the calibration subset that the blind human grade passed (sensitivity)",
                  s.sensitivity, Unit.RATE, s.positives),
            Claim(ClaimKey(run_id, s.service, Measure.JUDGE_SPECIFICITY), "rate",
                  f"{s.service}: the judge failed {s.specificity.numerator} of the {s.specificity.denominator} "
                  "calls of the calibration subset that the blind human grade failed (specificity)",
                  s.specificity, Unit.RATE, s.negatives),
            Claim(ClaimKey(run_id, s.service, Measure.JUDGE_PASS_RATE), "rate",
                  f"{s.service}: the judge passed {s.judge_pass.numerator} of {s.judge_pass.denominator} "
                  "counted complete returns it graded (uncorrected)", s.judge_pass, Unit.RATE, s.judged),
            Claim(ClaimKey(run_id, s.service, Measure.JUDGE_CORRECTED_PASS_RATE), "corrected_rate",
                  f"{s.service}: pass rate among the {len(s.judged)} judged complete returns, corrected for the "
                  "judge's errors on this service's calibration subset (Rogan–Gladen)",
                  s.corrected, Unit.RATE, s.judged)]
    for c in judge.comparisons:
        out.append(Claim(
            ClaimKey(run_id, Pair(c.candidate, c.baseline), Measure.JUDGE_CORRECTED_DIFFERENCE), "difference",
            f"Corrected pass rate of {c.candidate} minus {c.baseline}, each corrected for the judge's errors on "
            "its own calibration subset (Rogan–Gladen)", c.difference, Unit.RATE, c.evidence,
            flags=judge.differential + judge.too_small))
    return out


def judge_flags(grading: GradingAnalysis | None, key: ClaimKey) -> tuple[str, ...]:
    """The judge's warnings for a claim of the comparison itself, when its outcomes are
    the judge's (logged, beside a judge column) and the judge errs differently between
    the services compared or its subset cannot bound its errors."""
    if grading is None or grading.judge is None or grading.grading.rules.primary != "logged":
        return ()
    if not isinstance(key.subject, Pair) or key.measure not in JUDGED_MEASURES or not key.is_overall:
        return ()
    return grading.judge.differential + grading.judge.too_small
