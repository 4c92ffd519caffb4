"""How numbers are shown: the only place where rounding happens (with the number formats
of ``model.numbers`` that the metric object shares, re-exported here).

Honest display rules: an estimate never appears without its interval; a rate is shown
as 0% or 100% only when it is exactly that; p-values too small to print are bounded,
never shown as 0.
"""

from __future__ import annotations

import math
from typing import Protocol

from reportgen.model.measures import Unit
from reportgen.model.metric import PASS_FAIL, SCORE, PrimaryMetric
# Re-exported: the number formats the pages and templates use are all read from here.
from reportgen.model.numbers import MINUS as MINUS, magnitude_points as magnitude_points, percent, points as points, score
from reportgen.stats import PAIRED_METHODS


class Shown(Protocol):
    """What the formatting below reads of a claim: a Claim, or a claim's published record
    read back (the page of changes shows both versions' numbers as the report did)."""

    @property
    def kind(self) -> str: ...
    @property
    def unit(self) -> str | None: ...
    @property
    def estimate(self) -> float | None: ...
    @property
    def numerator(self) -> int | None: ...
    @property
    def denominator(self) -> int | None: ...
    @property
    def low(self) -> float | None: ...
    @property
    def high(self) -> float | None: ...
    @property
    def confidence_level(self) -> float | None: ...
    @property
    def method(self) -> str | None: ...
    @property
    def p_value(self) -> float | None: ...
    @property
    def adjusted_p_value(self) -> float | None: ...
    @property
    def adjustment(self) -> str | None: ...
    @property
    def verdict(self) -> str | None: ...
    @property
    def verdict_label(self) -> str | None: ...
    @property
    def group(self) -> int | None: ...
    @property
    def decision_basis(self) -> str | None: ...


def p_value(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "undefined"
    if value < 0.0001:
        return "< 0.0001"
    if value >= 0.99995 and value < 1:
        return "> 0.9999"
    return f"{value:.4f}"


def milliseconds(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "undefined"
    return f"{value / 1000:.1f} s" if value >= 1000 else f"{value:.0f} ms"


def _paired(claim: Shown) -> bool:
    """A difference of paired pass/fail data (or a decision read from one): two decimals."""
    return claim.kind == "paired_difference" or (claim.kind == "decision" and claim.method in PAIRED_METHODS)


def _metric(claim: Shown) -> PrimaryMetric:
    """The metric a difference is on, as its unit says: a score, or pass/fail (a rate)."""
    return SCORE if claim.unit == Unit.SCORE else PASS_FAIL


def interval(claim: Shown) -> str:
    if claim.low is None or claim.high is None or math.isnan(claim.low) or math.isnan(claim.high):
        return ""
    if claim.kind == "rank":
        return f"[ranks {claim.low:g}–{claim.high:g}]"
    if claim.kind == "agreement":
        return f"[{claim.low:.2f}, {claim.high:.2f}]"
    if claim.unit == Unit.SCORE or _paired(claim) or claim.kind in ("difference", "decision"):
        # a paired pass/fail difference to two decimals, as the paired analyses are usually reported
        return _metric(claim).interval_text(claim.low, claim.high, 2 if _paired(claim) else 1)
    return f"[{percent(claim.low)}, {percent(claim.high)}]"


def level(claim: Shown) -> str:
    """A confidence level as few digits as it needs: 95%, or 99.17% for a Bonferroni level."""
    return f"{claim.confidence_level * 100:.4g}%" if claim.confidence_level else ""


def decision_basis(claim: Shown) -> str:
    """The interval a decision was read on, named and printed: "99.17% Bonferroni-adjusted
    Newcombe [−5.5, +46.1]", so a decision never sits beside an interval it did not read."""
    basis = claim.decision_basis or "the interval"
    name = basis.removeprefix("the ").removesuffix(" interval")
    if name == "interval" or not name:
        name = f"{level(claim)} interval"
    return f"{name} {interval(claim)}".strip()


def value(claim: Shown) -> str:
    """The claim's number as the pages show it (interval shown separately)."""
    if claim.kind == "rate":
        return f"{percent(claim.estimate)} ({claim.numerator}/{claim.denominator})"
    if claim.kind == "agreement":
        return "κ not defined" if claim.estimate is None or not math.isfinite(claim.estimate) else (
            f"κ = {claim.estimate:.2f}")
    if claim.kind == "corrected_rate":
        return "not estimable" if claim.estimate is None or not math.isfinite(claim.estimate) else (
            percent(claim.estimate))
    if claim.kind in ("difference", "paired_difference"):
        return _metric(claim).difference_text(claim.estimate, 2 if claim.kind == "paired_difference" else 1)
    if claim.kind == "decision":
        return claim.verdict_label or claim.verdict or ""
    if claim.kind == "test":
        if claim.p_value is None:
            return "undefined"
        adjusted = f", {claim.adjustment} {p_value(claim.adjusted_p_value)}" if claim.adjusted_p_value is not None else ""
        return f"{p_is(claim.p_value)}{adjusted}"
    if claim.kind == "rank":
        return f"group {claim.group}"
    if claim.unit == Unit.MS:
        return milliseconds(claim.estimate)
    if claim.unit == Unit.SCORE and claim.method == "sample-sd":
        return f"sd {score(claim.estimate, signed=False)}"
    if claim.unit == Unit.SCORE:
        return f"{score(claim.estimate, signed=False)} ({claim.numerator} scored)"
    if claim.kind == "count" and claim.numerator is not None:
        return str(claim.numerator)
    return "undefined" if claim.estimate is None else f"{claim.estimate:g}"


def p_is(value: float | None) -> str:
    """"p = 0.0123", "p < 0.0001": a p-value as a phrase (never "p = < 0.0001")."""
    shown = p_value(value)
    return f"p {shown}" if shown[0] in "<>" else f"p = {shown}"


_NULL_AND_EXTREME = {
    # test: (the hypothesis p is computed under, what "at least as extreme" means for it)
    "fisher": ("both services had the same pass probability", "a split of passes at least this uneven"),
    "welch": ("both services had the same mean score",
              "a difference of mean scores at least this large, in either direction,"),
    "paired-t": ("the mean difference over the units were zero",
                 "a mean difference at least this large, in either direction,"),
    "mcnemar": ("both services had the same pass probability on every task",
                "a split of the discordant pairs at least this uneven"),
    "sign-flip": ("each cluster's summed difference were as likely to point either way",
                  "a total difference at least this far from zero, in either direction,"),
}


def p_value_reading(p: float | None, alpha: float, test: str = "fisher") -> str:
    """One line on what the p-value of ``test`` ("fisher", "welch", "paired-t",
    "mcnemar") is, and is not, in that test's own terms. An undefined p gets no
    probability sentence."""
    if p is None or not math.isfinite(p):
        return ("No p-value can be computed from these data (see the warning beside the test), so no "
                "probability is stated and no direction is read from it.")
    null, extreme = _NULL_AND_EXTREME[test]
    share = f"about {percent(p, 1)}" if p >= 0.001 else "less than 0.1%"
    side = "below" if p < alpha else "not below"
    return (f"If {null}, {extreme} would occur in {share} of runs like this one; p is {side} the "
            f"pre-registered α = {alpha:g}. It is not the probability that either service is "
            "better, nor that the result is due to chance.")
