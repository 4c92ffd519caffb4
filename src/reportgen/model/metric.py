"""The primary metric as an object: what a run measures, how two services are compared
on it, what the comparison's interval and test are called, and how its numbers print.

A run's primary metric is pass/fail (``first_pass_rate``: two pass rates, a Newcombe
interval and Fisher's exact test) or a score (``score``: two means, a Welch interval and
Welch's t test). This is the one place that decides those names; the analysis, the
claims, the charts and the templates read them here instead of testing the metric's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from reportgen.model.measures import Measure, Unit
from reportgen.model.numbers import magnitude_points, points, score

Metric = Literal["first_pass_rate", "score"]  # run.primary_metric
METRICS: tuple[Metric, ...] = get_args(Metric)


@dataclass(frozen=True)
class PrimaryMetric:
    scored: bool  # a number per complete return; False: pass / fail
    higher_is_better: bool = True

    @property
    def name(self) -> Metric:
        """As ``run.primary_metric`` writes it."""
        return "score" if self.scored else "first_pass_rate"

    @property
    def unit(self) -> Unit:
        """The unit of a claim on this metric (``unit`` in ``results.json``)."""
        return Unit.SCORE if self.scored else Unit.RATE

    # What each service is summarised by, and the claims that show it.
    @property
    def quantity(self) -> str:
        return "mean score" if self.scored else "first-submission pass rate"

    @property
    def value_key(self) -> Measure:
        """The measure of each service's headline claim."""
        return Measure.MEAN_SCORE if self.scored else Measure.FIRST_PASS_RATE

    @property
    def value_label(self) -> str:
        return "Mean score (complete returns)" if self.scored else "Pass rate (all planned first submissions)"

    @property
    def compared(self) -> str:
        """What a test of two independent samples compares, as its statement says."""
        return "scores" if self.scored else "pass / non-pass counts"

    @property
    def unit_value(self) -> str:
        """One unit's value in a paired difference, as its statement says."""
        return "score" if self.scored else "pass (1) / non-pass (0)"

    # The interval of a difference of two independent samples.
    @property
    def interval_short(self) -> str:
        return "Welch" if self.scored else "Newcombe"

    @property
    def interval(self) -> str:
        return "Welch t interval" if self.scored else "Newcombe hybrid-score interval"

    # The test printed beside that difference.
    @property
    def test_key(self) -> Measure:
        """The test claim's measure (its id in ``results.json``), also the key of its
        p-value reading."""
        return Measure.WELCH if self.scored else Measure.FISHER

    @property
    def test_family(self) -> str:
        return "Welch" if self.scored else "Fisher"

    @property
    def test_name(self) -> str:
        """The test as a decision names it."""
        return "Welch's t test" if self.scored else "Fisher's exact test"

    @property
    def test(self) -> str:
        """The test as a heading and a statement name it."""
        return "Welch t test, two-sided" if self.scored else "Fisher exact test, two-sided"

    @property
    def test_short(self) -> str:
        return f"{self.test_family} p"

    # Numbers on this metric's scale: a score on its own, a rate in percentage points.
    @property
    def axis_scale(self) -> float:
        """The factor a chart multiplies a difference by: 100 for percentage points."""
        return 1.0 if self.scored else 100.0

    def difference_text(self, value: float | None, digits: int = 1) -> str:
        """A difference on this metric: "+0.25", or "+12.5 points"."""
        return score(value) if self.scored else f"{points(value, digits)} points"

    def interval_text(self, low: float | None, high: float | None, digits: int = 1) -> str:
        if self.scored:
            return f"[{score(low)}, {score(high)}]"
        return f"[{points(low, digits)}, {points(high, digits)}]"

    def threshold_text(self, value: float) -> str:
        """A registered threshold or margin, without a sign on a rate."""
        return f"{value:g} (score units)" if self.scored else magnitude_points(value)


PASS_FAIL = PrimaryMetric(scored=False)
SCORE = PrimaryMetric(scored=True)
