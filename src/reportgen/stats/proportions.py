"""Intervals and tests for pass rates (binomial proportions).

Formulas:
- Wilson score interval: Wilson (1927); the interval of R's ``prop.test`` without
  continuity correction and of statsmodels ``proportion_confint(method="wilson")``.
- Newcombe hybrid-score interval for a difference of two independent proportions:
  Newcombe (1998), method 10; statsmodels ``confint_proportions_2indep(method="newcomb")``.
- Fisher's exact test, two-sided: the sum of the probabilities of all tables with the
  same margins that are no more likely than the observed one (R's ``fisher.test``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .results import Estimate, RateEstimate, TestResult, check_confidence_level
from .warnings import NO_RATE_DATA, ONE_SIDE_EMPTY, ZERO_MARGIN

RATE_ASSUMPTIONS = (
    "calls are independent of one another",
    "the pass probability is stable over the observation window",
)
# The same interval of how many planned calls completed (a score run's calls are scored,
# not passed).
COMPLETION_ASSUMPTIONS = (
    "calls are independent of one another",
    "the completion probability is stable over the observation window",
)
DIFFERENCE_ASSUMPTIONS = RATE_ASSUMPTIONS + (
    "the two samples are independent (no pairing of calls)",
    "the comparison was chosen before the data were seen",
)


def two_sided_z(confidence_level: float) -> float:
    """The normal quantile of a two-sided interval at ``confidence_level``."""
    from scipy.stats import norm  # when computed: see reportgen.stats

    return float(norm.ppf(0.5 + check_confidence_level(confidence_level) / 2.0))


def _check_counts(passes: int, n: int) -> None:
    if n < 0 or passes < 0 or passes > n:
        raise ValueError(f"need 0 <= passes <= n, got passes={passes!r}, n={n!r}")


def wilson(passes: int, n: int, confidence_level: float = 0.95) -> RateEstimate:
    """Wilson score interval for ``passes`` out of ``n``."""
    _check_counts(passes, n)
    z = two_sided_z(confidence_level)
    if n == 0:
        return RateEstimate(
            estimate=math.nan, low=0.0, high=1.0, confidence_level=confidence_level,
            method="wilson", assumptions=RATE_ASSUMPTIONS,
            warnings=(NO_RATE_DATA,),
            numerator=0, denominator=0,
        )
    p = passes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = (z / (1 + z2 / n)) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # At 0/n and n/n the formula gives the bound exactly; clamp rounding noise.
    low = 0.0 if passes == 0 else max(0.0, centre - half)
    high = 1.0 if passes == n else min(1.0, centre + half)
    return RateEstimate(
        estimate=p, low=low, high=high, confidence_level=confidence_level,
        method="wilson", assumptions=RATE_ASSUMPTIONS, numerator=passes, denominator=n,
    )


def newcombe_difference(
    x1: int, n1: int, x2: int, n2: int, confidence_level: float = 0.95
) -> Estimate:
    """Newcombe hybrid-score interval for ``x1/n1 - x2/n2`` (independent samples)."""
    if n1 == 0 or n2 == 0:
        _check_counts(x1, n1)
        _check_counts(x2, n2)
        return Estimate(
            estimate=math.nan, low=-1.0, high=1.0, confidence_level=confidence_level,
            method="newcombe-hybrid-score", assumptions=DIFFERENCE_ASSUMPTIONS,
            warnings=(ONE_SIDE_EMPTY,),
        )
    a = wilson(x1, n1, confidence_level)
    b = wilson(x2, n2, confidence_level)
    d = a.estimate - b.estimate
    low = d - math.sqrt((a.estimate - a.low) ** 2 + (b.high - b.estimate) ** 2)
    high = d + math.sqrt((a.high - a.estimate) ** 2 + (b.estimate - b.low) ** 2)
    return Estimate(
        estimate=d, low=max(-1.0, low), high=min(1.0, high),
        confidence_level=confidence_level, method="newcombe-hybrid-score",
        assumptions=DIFFERENCE_ASSUMPTIONS,
    )


def _log_hypergeom(k, row1: int, row2: int, col1: int):
    """log P(top-left cell = k) for a 2x2 table with the given margins; ``k`` may be an
    array of cells (one ufunc call per term, not one per cell: the same operations in
    the same order, so the same floats)."""
    from scipy.special import gammaln  # when computed: see reportgen.stats

    n = row1 + row2

    def log_comb(a, b):
        return gammaln(a + 1) - gammaln(b + 1) - gammaln(a - b + 1)

    return log_comb(row1, k) + log_comb(row2, col1 - k) - log_comb(n, col1)


def fisher_exact(table) -> TestResult:
    """Fisher's exact test, two-sided, for ``[[a, b], [c, d]]``.

    Rows are the two groups, columns pass / not pass. The statistic is the sample
    odds ratio ``(a*d)/(b*c)`` (inf or NaN where a margin makes it so, as in scipy).
    """
    (a, b), (c, d) = ((int(v) for v in row) for row in table)
    if min(a, b, c, d) < 0:
        raise ValueError(f"table cells must be non-negative, got {table!r}")
    row1, row2, col1 = a + b, c + d, a + c
    odds_ratio = (a * d / (b * c)) if b * c else (math.inf if a * d else math.nan)
    warnings: tuple[str, ...] = ()
    if row1 == 0 or row2 == 0 or col1 == 0 or col1 == row1 + row2:
        # Only one table has these margins: nothing to test.
        warnings = (ZERO_MARGIN,)
        return TestResult(1.0, odds_ratio, "odds_ratio", "fisher-exact",
                          assumptions=DIFFERENCE_ASSUMPTIONS, warnings=warnings, table=((a, b), (c, d)))
    k_min, k_max = max(0, col1 - row2), min(row1, col1)
    logs = _log_hypergeom(np.arange(k_min, k_max + 1, dtype=float), row1, row2, col1).tolist()
    observed = logs[a - k_min]
    # Tables "no more likely" than the observed one, with R's relative tolerance
    # so that ties in exact arithmetic are not lost to rounding.
    threshold = observed + math.log1p(1e-7)
    top = max(logs)
    total = sum(math.exp(v - top) for v in logs)
    tail = sum(math.exp(v - top) for v in logs if v <= threshold)
    p = min(1.0, tail / total)
    return TestResult(p, odds_ratio, "odds_ratio", "fisher-exact",
                      assumptions=DIFFERENCE_ASSUMPTIONS, warnings=warnings, table=((a, b), (c, d)))


@dataclass(frozen=True)
class RateComparison:
    """Two independent rates compared: the difference with its interval, and the test."""

    difference: Estimate  # rate 1 - rate 2, Newcombe hybrid score
    test: TestResult  # Fisher's exact test, two-sided


def compare_rates(x1: int, n1: int, x2: int, n2: int, confidence_level: float = 0.95) -> RateComparison:
    """``x1/n1`` against ``x2/n2``: the one place the difference and its test are made
    together, so every comparison of two rates on every page reads the same way."""
    return RateComparison(newcombe_difference(x1, n1, x2, n2, confidence_level),
                          fisher_exact([[x1, n1 - x1], [x2, n2 - x2]]))
