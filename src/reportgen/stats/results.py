"""Typed, immutable results shared by every statistical method.

A result never forgets what it is: the interval carries its confidence level and
method, and every result carries the assumptions it rests on and any warning about
degenerate data, so the page that shows it can show those too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# The interval methods of paired data: the paired t interval and the percentile
# bootstraps over pairs, clusters and tasks (pages print their pass/fail differences
# to two decimals, as paired analyses are usually reported).
PAIRED_T = "paired-t"
PAIRED_BOOTSTRAP = "paired-percentile-bootstrap"
CLUSTER_BOOTSTRAP = "cluster-percentile-bootstrap"
HIERARCHICAL_BOOTSTRAP = "hierarchical-percentile-bootstrap"
PAIRED_METHODS = frozenset({PAIRED_T, PAIRED_BOOTSTRAP, CLUSTER_BOOTSTRAP, HIERARCHICAL_BOOTSTRAP})


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a two-sided interval.

    ``estimate`` is NaN only when the data cannot define it (n = 0); ``warnings``
    then says so in words, and the site shows the words, not the NaN.
    """

    estimate: float
    low: float
    high: float
    confidence_level: float
    method: str
    assumptions: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    numerator: int | None = None
    denominator: int | None = None
    p_value: float | None = None

    @property
    def is_defined(self) -> bool:
        return not math.isnan(self.estimate)


@dataclass(frozen=True)
class RateEstimate(Estimate):
    """A proportion: passes out of n, counts always present (``estimate`` is NaN, with a
    warning, only when n = 0)."""

    numerator: int = 0
    denominator: int = 0


def check_confidence_level(confidence_level: float) -> float:
    """``confidence_level`` as a float, refusing values outside (0, 1): the one check
    every method makes."""
    level = float(confidence_level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}; "
                         "write 0.95 for a 95% interval.")
    return level


@dataclass(frozen=True)
class TestResult:
    """A hypothesis test: its p-value, statistic and what it assumes."""

    __test__ = False  # not a pytest test class

    p_value: float
    statistic: float
    statistic_name: str
    method: str
    alternative: str = "two-sided"
    assumptions: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    table: tuple[tuple[int, int], tuple[int, int]] | None = None  # the 2x2 table tested, where there is one
