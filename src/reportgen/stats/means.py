"""Two independent samples of a numeric score: the difference of their means with the
Welch interval, and the Welch t test that interval inverts.

The interval and the test are one computation (the same standard error and
Welch–Satterthwaite degrees of freedom), so a decision read from the interval can never
point the other way from the p-value printed beside it: the interval excludes zero
exactly when p < 1 − level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .paired import ArrayLike, as_vector
from .results import Estimate, TestResult, check_confidence_level
from .warnings import ALL_TIES_WELCH, FEW_SCORES

WELCH_ASSUMPTIONS = (
    "each service's scores are independent draws (one per call)",
    "the mean of each sample is approximately normal (the t approximation; it improves with more calls)",
    "the two services' variances may differ (Welch–Satterthwaite degrees of freedom)",
)


@dataclass(frozen=True)
class MeanComparison:
    """``mean(b) - mean(a)`` with its Welch interval, and the Welch test of no difference."""

    difference: Estimate
    test: TestResult


def welch_difference(b: ArrayLike, a: ArrayLike, confidence_level: float = 0.95) -> MeanComparison:
    """Difference of means ``b - a`` of two independent samples.

    Oracle: ``scipy.stats.ttest_ind(b, a, equal_var=False)`` (statistic, p) and its
    ``confidence_interval(level)``.
    """
    level = check_confidence_level(confidence_level)
    b_arr, a_arr = as_vector(b, "b"), as_vector(a, "a")
    nb, na = int(b_arr.size), int(a_arr.size)
    mean = float(np.mean(b_arr) - np.mean(a_arr)) if nb and na else math.nan
    if nb < 2 or na < 2:
        # A sample of one has no spread to estimate: no interval, no test.
        return _undefined(mean, level, FEW_SCORES)
    # Relative to the data's own scale (no floor in fixed units): multiplying every
    # score by 1e12 or 1e-12 changes nothing. Scores below one are worked out scaled up
    # by a power of two (exact, even for a subnormal score) to the order of one, and the
    # results scaled back: the variance of a tiny spread (0 and 1e-161) is otherwise
    # subnormal, and its few bits moved p by 0.005.
    scale = max(float(np.max(np.abs(b_arr))), float(np.max(np.abs(a_arr))))
    shift = -math.frexp(scale)[1] if 0 < scale < 1 else 0
    b_up, a_up = np.ldexp(b_arr, shift), np.ldexp(a_arr, shift)
    mean_up = float(np.mean(b_up) - np.mean(a_up))
    mean = math.ldexp(mean_up, -shift)
    vb, va = float(np.var(b_up, ddof=1)), float(np.var(a_up, ddof=1))
    se_up = math.sqrt(vb / nb + va / na)
    if se_up <= 64 * np.finfo(float).eps * math.ldexp(scale, shift):
        # Every score equal within each service: the spread is zero up to rounding.
        return _undefined(mean, level, ALL_TIES_WELCH, zero_width=True)
    # Welch–Satterthwaite df from each sample's share of the variance: the textbook form
    # squares variances, which underflow to zero for tiny but nonzero spreads.
    share_b, share_a = (vb / nb) / se_up**2, (va / na) / se_up**2
    df = 1.0 / (share_b**2 / (nb - 1) + share_a**2 / (na - 1))
    from scipy.stats import t as student_t  # when computed: see reportgen.stats

    half_up = float(student_t.ppf(0.5 + level / 2.0, df)) * se_up
    t_stat = mean_up / se_up
    p = float(min(1.0, 2.0 * student_t.sf(abs(t_stat), df)))
    low, high = math.ldexp(mean_up - half_up, -shift), math.ldexp(mean_up + half_up, -shift)
    difference = Estimate(mean, low, high, level, "welch-t", WELCH_ASSUMPTIONS, p_value=p)
    test = TestResult(p, t_stat, "t", "welch-t", assumptions=WELCH_ASSUMPTIONS)
    return MeanComparison(difference, test)


def _undefined(mean: float, level: float, warning: str, zero_width: bool = False) -> MeanComparison:
    low = high = mean if zero_width else math.nan
    difference = Estimate(mean, low, high, level, "welch-t", WELCH_ASSUMPTIONS, (warning,))
    test = TestResult(math.nan, math.nan, "t", "welch-t", assumptions=WELCH_ASSUMPTIONS, warnings=(warning,))
    return MeanComparison(difference, test)
