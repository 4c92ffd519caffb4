"""What a claim measures, and the unit its number is in: closed vocabularies.

``Measure`` is the measure part of a claim's id (``<run>.<subject>.<measure>``) and
``Unit`` the ``unit`` field of ``results.json``. Both are ``StrEnum``s: the values are
the very words the ids and ``results.json`` have always used, templates may pass them
as plain strings, and Python code that names one the enum does not know fails the type
check (and, from a template, the lookup).
"""

from __future__ import annotations

from enum import StrEnum


class Measure(StrEnum):
    # about one service
    FIRST_PASS_RATE = "first_pass_rate"  # the headline of a pass/fail run
    COMPLETE_PASS_RATE = "complete_pass_rate"
    COMPLETED = "completed"  # complete returns of all planned calls (score runs)
    TECHNICAL_FAILURES = "technical_failures"  # detail: a failure status
    MISSING_CALLS = "missing_calls"
    MEAN_SCORE = "mean_score"  # the headline of a score run
    SCORE_SD = "score_sd"
    LATENCY_MEDIAN_MS = "latency_median_ms"
    LATENCY_P90_MS = "latency_p90_ms"
    RANK = "rank"
    # about a comparison of two independent samples
    DIFFERENCE = "difference"
    FISHER = "fisher"  # the test beside a difference of pass rates
    WELCH = "welch"  # the test beside a difference of mean scores
    VERDICT = "verdict"
    # about paired units
    PAIRED_DIFFERENCE = "paired_difference"
    MCNEMAR = "mcnemar"
    BOOTSTRAP = "bootstrap"
    SIGN_FLIP = "sign_flip"
    PAIRS = "pairs"  # detail: a cell of the 2×2 table
    ROW_LEVEL = "row_level"
    # longitudinal
    CHANGE = "change"
    CHANGE_FISHER = "change.fisher"
    CHANGE_VS_REFERENCE = "change_vs_reference"
    # later attempts (detail: the attempt budget)
    PASS_WITHIN_ATTEMPTS = "pass_within_attempts"
    WITHIN_ATTEMPTS_DIFFERENCE = "within_attempts_difference"
    # grading: agreement between graders, and a judge checked against human grades
    GRADER_AGREEMENT = "grader_agreement"
    JUDGE_AGREEMENT = "judge_agreement"
    JUDGE_PASS_RATE = "judge_pass_rate"
    JUDGE_CORRECTED_PASS_RATE = "judge_corrected_pass_rate"
    JUDGE_SENSITIVITY = "judge_sensitivity"
    JUDGE_SPECIFICITY = "judge_specificity"
    JUDGE_CORRECTED_DIFFERENCE = "judge_corrected_difference"


class Unit(StrEnum):
    RATE = "rate"
    SCORE = "score"
    MS = "ms"
    CALLS = "calls"
    PAIRS = "pairs"
    RANK = "rank"
    KAPPA = "kappa"  # an agreement coefficient
