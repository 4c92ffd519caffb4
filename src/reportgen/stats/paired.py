"""Paired designs: the same tasks (or seeds, or splits) run on both services.

The unit of analysis is the pair, through its difference ``d_i = b_i - a_i`` (B first,
so that a positive mean says B scored higher).

Formulas:
- Student t interval for the mean difference: ``mean(d) ± t_{n-1, (1+level)/2} · sd(d)/√n``
  with the sample sd (n − 1); the test is the two-sided one-sample t test of mean(d) = 0.
  Oracle: ``scipy.stats.ttest_rel(b, a)`` and ``scipy.stats.t.interval``.
- Exact McNemar test: under no difference each discordant pair favours either side with
  probability 1/2, so ``p = min(1, 2 · BinomCDF(min(b, c); b + c, 1/2))``.
  Oracle: ``scipy.stats.binomtest(b, b + c, 0.5)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .results import PAIRED_T, Estimate, TestResult, check_confidence_level
from .warnings import ALL_TIES, NO_DISCORDANT, NO_PAIRS, ONE_PAIR_T

PAIRED_T_ASSUMPTIONS = (
    "pairs are independent of one another (one pair per task, seed or split)",
    "the mean difference is close to normally distributed (with few pairs: the differences "
    "themselves are roughly normal)",
    "the comparison was chosen before the data were seen",
)
MCNEMAR_ASSUMPTIONS = (
    "pairs are independent of one another (one pair per task)",
    "with no difference between the services, a discordant pair is equally likely to favour "
    "either one",
)


ArrayLike = Sequence[float] | np.ndarray


def as_vector(values: ArrayLike, name: str) -> np.ndarray:
    """``values`` as a 1-D float array of finite numbers, or a ValueError naming the position."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}.")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{name}[{i}] is {float(array[i])!r}: need finite numbers; drop that pair "
                         "from both arms (and say so) or record a score for it.")
    return array


def as_pairs(b: ArrayLike, a: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``b`` and ``a`` as equal-length finite float vectors (row i of each is one pair)."""
    b_arr, a_arr = as_vector(b, "b"), as_vector(a, "a")
    if b_arr.shape != a_arr.shape:
        raise ValueError(f"b has {b_arr.size} values but a has {a_arr.size}: paired data need "
                         "one value per arm for every pair.")
    return b_arr, a_arr


@dataclass(frozen=True, kw_only=True)
class PairedEstimate(Estimate):
    """The mean paired difference with its t interval, plus a summary of the differences.

    ``sd``, ``standard_error`` and ``p_value`` are None where the data cannot define them
    (fewer than two pairs, or all differences equal); ``warnings`` then says why.
    """

    n: int
    mean: float
    median: float | None
    minimum: float | None
    maximum: float | None
    sd: float | None
    standard_error: float | None


@dataclass(frozen=True)
class PairedBinaryResult:
    """Paired pass/fail outcomes: the discordance table, the mean difference and McNemar.

    ``difference`` is the paired t estimate of the mean of ``d_i = b_i - a_i`` in {-1, 0, 1};
    its mean equals ``(only_b - only_a) / n``.
    """

    both_pass: int
    both_fail: int
    only_a: int
    only_b: int
    difference: PairedEstimate
    mcnemar: TestResult

    @property
    def n(self) -> int:
        return self.both_pass + self.both_fail + self.only_a + self.only_b

    @property
    def table(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """Rows: A passes / fails; columns: B passes / fails."""
        return ((self.both_pass, self.only_a), (self.only_b, self.both_fail))


def _undefined_paired(confidence_level: float) -> PairedEstimate:
    return PairedEstimate(
        estimate=math.nan, low=math.nan, high=math.nan, confidence_level=confidence_level,
        method=PAIRED_T, assumptions=PAIRED_T_ASSUMPTIONS, warnings=(NO_PAIRS,),
        n=0, mean=math.nan, median=None, minimum=None, maximum=None, sd=None,
        standard_error=None,
    )


def paired_t(b: ArrayLike, a: ArrayLike, confidence_level: float = 0.95) -> PairedEstimate:
    """Mean of ``d = b - a`` with its Student t interval and two-sided t-test p-value.

    Oracle: ``scipy.stats.ttest_rel(b, a)`` (statistic, p) and
    ``scipy.stats.t.interval(level, n - 1, loc=mean, scale=sd/√n)``.
    """
    level = check_confidence_level(confidence_level)
    b_arr, a_arr = as_pairs(b, a)
    d = b_arr - a_arr
    n = int(d.size)
    if n == 0:
        return _undefined_paired(level)
    mean = float(np.mean(d))

    def estimate(low: float, high: float, sd: float | None, se: float | None,
                 warnings: tuple[str, ...] = (), p_value: float | None = None) -> PairedEstimate:
        return PairedEstimate(
            estimate=mean, low=low, high=high, confidence_level=level, method=PAIRED_T,
            assumptions=PAIRED_T_ASSUMPTIONS, warnings=warnings, p_value=p_value,
            n=n, mean=mean, median=float(np.median(d)), minimum=float(d.min()), maximum=float(d.max()),
            sd=sd, standard_error=se)

    if n == 1:
        return estimate(mean, mean, None, None, warnings=(ONE_PAIR_T,))
    # Relative to the data's own scale (no floor in fixed units): multiplying every
    # score by 1e12 or 1e-12 changes nothing.
    scale = max(float(np.max(np.abs(b_arr))), float(np.max(np.abs(a_arr))))
    if float(np.ptp(d)) <= 64 * np.finfo(float).eps * scale:
        # Equal up to rounding (0.7 - 0.2 and 3.5 - 3 differ in the last bit): tested on
        # the values, not on sd == 0, which would leave an absurdly narrow "real" interval.
        return estimate(mean, mean, 0.0, 0.0, warnings=(ALL_TIES,))
    sd = float(np.std(d, ddof=1))
    se = sd / math.sqrt(n)
    df = n - 1
    from scipy.stats import t as student_t  # when computed: see reportgen.stats

    half = float(student_t.ppf(0.5 + level / 2.0, df)) * se
    t_stat = mean / se
    p = float(min(1.0, 2.0 * student_t.sf(abs(t_stat), df)))
    return estimate(mean - half, mean + half, sd, se, p_value=p)


def _check_count(value: int, name: str) -> int:
    count = int(value)
    if count != value or count < 0:
        raise ValueError(f"{name} must be a non-negative whole number of pairs, got {value!r}.")
    return count


def mcnemar_exact(b_only: int, a_only: int) -> TestResult:
    """Exact two-sided McNemar test from the two discordant counts.

    ``b_only``: pairs where only B passed; ``a_only``: pairs where only A passed.
    ``p = min(1, 2 · BinomCDF(min(b, c); b + c, 1/2))``; the statistic is ``min(b, c)``,
    as in statsmodels ``mcnemar(exact=True)``. Oracle: ``scipy.stats.binomtest``.
    """
    b = _check_count(b_only, "b_only")
    c = _check_count(a_only, "a_only")
    smaller = float(min(b, c))
    if b + c == 0:
        return TestResult(1.0, smaller, "smaller_discordant_count", "mcnemar-exact",
                          assumptions=MCNEMAR_ASSUMPTIONS, warnings=(NO_DISCORDANT,))
    from scipy.stats import binom  # when computed: see reportgen.stats

    p = float(min(1.0, 2.0 * binom.cdf(min(b, c), b + c, 0.5)))
    return TestResult(p, smaller, "smaller_discordant_count", "mcnemar-exact",
                      assumptions=MCNEMAR_ASSUMPTIONS)


def _as_binary(values: ArrayLike, name: str) -> np.ndarray:
    array = as_vector(values, name)
    bad = np.flatnonzero((array != 0.0) & (array != 1.0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{name}[{i}] is {float(array[i])!r}: pass/fail outcomes must be 0/1 or "
                         "False/True.")
    return array.astype(bool)


def paired_binary(a_pass: ArrayLike, b_pass: ArrayLike,
                  confidence_level: float = 0.95) -> PairedBinaryResult:
    """Pass/fail of A and B on the same tasks: 2×2 table, paired t of ``b - a``, McNemar.

    Row i of ``a_pass`` and ``b_pass`` is the same task. Oracles as for :func:`paired_t`
    and :func:`mcnemar_exact`.
    """
    a_arr, b_arr = _as_binary(a_pass, "a_pass"), _as_binary(b_pass, "b_pass")
    if a_arr.shape != b_arr.shape:
        raise ValueError(f"a_pass has {a_arr.size} values but b_pass has {b_arr.size}: "
                         "paired outcomes need both services on every task.")
    only_a = int(np.count_nonzero(a_arr & ~b_arr))
    only_b = int(np.count_nonzero(b_arr & ~a_arr))
    return PairedBinaryResult(
        both_pass=int(np.count_nonzero(a_arr & b_arr)),
        both_fail=int(np.count_nonzero(~a_arr & ~b_arr)),
        only_a=only_a,
        only_b=only_b,
        difference=paired_t(b_arr.astype(np.float64), a_arr.astype(np.float64),
                            confidence_level),
        mcnemar=mcnemar_exact(only_b, only_a),
    )
