"""Pre-registered decisions from an interval of the effect, candidate - baseline.

The interval is given as the page prints it; ``higher_is_better`` says which way is
better, and every sentence is written in that direction. A decision of improvement or
worse needs the interval to exclude zero and, where a test is printed beside it (an
exact test, adjusted for multiplicity when the run makes several comparisons), that
test to reject at alpha: the verdict never points a way the printed test does not.
An interval that cannot be computed, or has zero width, decides nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

VerdictCode = Literal[
    "blocked_by_critical",
    "useful_improvement",
    "improvement_not_useful_size",
    "candidate_worse",
    "no_difference_shown",
    "not_decidable",
]

LABELS: dict[str, str] = {
    "blocked_by_critical": "blocked by a critical failure",
    "useful_improvement": "useful improvement shown",
    "improvement_not_useful_size": "improvement shown, useful size not proven",
    "candidate_worse": "candidate worse",
    "no_difference_shown": "no difference shown",
    "not_decidable": "not decidable",
}
NOT_EQUIVALENT = "This is NOT evidence that the two are equivalent: the data may be too few to tell."


@dataclass(frozen=True)
class Verdict:
    code: VerdictCode
    label: str
    reason: str
    low: float
    high: float
    min_useful_effect: float | None
    noninferiority_margin: float | None
    noninferior: bool | None  # None when no margin was registered (or nothing was decidable)
    noninferiority_text: str | None
    higher_is_better: bool = True
    basis: str = "the interval"  # the interval the decision was read on, as its sentences name it

    @property
    def text(self) -> str:
        """The whole verdict as one or two sentences."""
        ni = f" {self.noninferiority_text}" if self.noninferiority_text else ""
        return f"{self.label[0].upper()}{self.label[1:]}: {self.reason}{ni}"


@dataclass(frozen=True)
class Test:
    """The test printed beside the interval, as the decision reads it."""

    __test__ = False  # not a pytest test class
    pvalue: float
    alpha: float
    name: str  # e.g. "Fisher's exact test" or "the Holm-adjusted Fisher test"
    p_label: str | None = None  # e.g. "Holm-adjusted p": the p-value is then quoted in the verdict


def decide(
    low: float,
    high: float,
    min_useful_effect: float | None = None,
    noninferiority_margin: float | None = None,
    critical_failure: bool = False,
    higher_is_better: bool = True,
    test: Test | None = None,
    not_decidable: str | None = None,
    basis: str = "the interval",
) -> Verdict:
    """The pre-registered verdict for an effect interval ``[low, high]`` of candidate -
    baseline (as printed). ``min_useful_effect`` and ``noninferiority_margin`` are
    magnitudes in the direction of better: a negative one is refused (its sign would
    otherwise be dropped). ``not_decidable`` is a reason, found by the caller, why no
    decision can be read from these data (too few clusters, for example). ``basis`` names
    the interval in the verdict's sentences ("the 99.17% Bonferroni-adjusted interval"), so
    a reader never has to guess which of the intervals on the page the decision was read on."""
    for name, value in (("min_useful_effect", min_useful_effect), ("noninferiority_margin", noninferiority_margin)):
        if value is not None and not float(value) >= 0:
            raise ValueError(f"{name} is a magnitude in the direction of better and must be >= 0, got {value!r}")
    words = _Words(higher_is_better, basis)
    # Oriented so that positive means the candidate is better.
    better_low, better_high = (low, high) if higher_is_better else (-high, -low)
    mue = None if min_useful_effect is None else float(min_useful_effect)
    undecidable = not_decidable or _undecidable(low, high)
    code: VerdictCode
    if critical_failure:
        code, reason = "blocked_by_critical", "a critical failure of the candidate blocks adoption whatever the interval."
    elif undecidable:
        code, reason = "not_decidable", undecidable
    else:
        code, reason = _read_interval(better_low, better_high, mue, words)
        code, reason = _agree_with_test(code, reason, better_low, better_high, test, words)
        reason = _with_adjusted_p(reason, test)
    label = LABELS[code]
    if code == "improvement_not_useful_size" and mue is None:
        label = "improvement shown"
    noninferior, ni_text = None, None
    if noninferiority_margin is not None and not undecidable:
        noninferior = better_low > -float(noninferiority_margin)
        ni_text = words.noninferior if noninferior else words.not_noninferior
    return Verdict(code, label, reason, low, high, min_useful_effect, noninferiority_margin, noninferior, ni_text,
                   higher_is_better, basis)


def _undecidable(low: float, high: float) -> str | None:
    if not (math.isfinite(low) and math.isfinite(high)):
        return "no interval can be computed from these data, so no decision is read from them."
    if low == high:
        return (f"the interval has zero width ([{low:+.3g}, {high:+.3g}]): it says nothing about "
                "uncertainty, so no decision is read from it.")
    return None


def _read_interval(low: float, high: float, mue: float | None, words: _Words) -> tuple[VerdictCode, str]:
    if low > 0 and mue is not None and low > mue:
        return "useful_improvement", words.useful
    if low > 0:
        if mue is None:
            return "improvement_not_useful_size", words.better_no_threshold
        return "improvement_not_useful_size", words.better_not_useful
    if high < 0:
        return "candidate_worse", words.worse
    return "no_difference_shown", f"{words.basis} contains zero. {NOT_EQUIVALENT}"


def _agree_with_test(code: VerdictCode, reason: str, low: float, high: float, test: Test | None,
                     words: _Words) -> tuple[VerdictCode, str]:
    """A direction needs the printed test to reject too; when the two disagree the
    decision says so and shows no direction."""
    if test is None:
        return code, reason
    p = _p(test.pvalue)
    if code != "no_difference_shown" and test.pvalue >= test.alpha:
        return "no_difference_shown", (
            f"{words.basis} excludes zero, but {test.name} does not reject at α = {test.alpha:g} "
            f"(p = {p}); a direction needs both, so none is shown. {NOT_EQUIVALENT}")
    if code == "no_difference_shown" and test.pvalue < test.alpha:
        return code, (f"{words.basis} contains zero, although {test.name} rejects at α = {test.alpha:g} "
                      f"(p = {p}): the two methods disagree at this boundary, and a direction needs both. "
                      f"{NOT_EQUIVALENT}")
    return code, reason


def _with_adjusted_p(reason: str, test: Test | None) -> str:
    """An adjusted test's p-value joins the first sentence of the reason, which names the
    interval: the two things the decision was read on, side by side."""
    if test is None or test.p_label is None or f"p = {_p(test.pvalue)}" in reason or math.isnan(test.pvalue):
        return reason
    first, dot, rest = reason.partition(". ")
    shown = _p(test.pvalue)
    phrase = f"{test.p_label} {shown}" if shown.startswith("<") else f"{test.p_label} = {shown}"
    return f"{first.rstrip('.')}; {phrase}{dot or '.'}{rest}"


def _p(value: float) -> str:
    return "< 0.0001" if value < 0.0001 else f"{value:.4f}"


class _Words:
    """The sentences of a decision, written in the direction of better, naming the
    interval they were read on."""

    def __init__(self, higher_is_better: bool, basis: str = "the interval") -> None:
        self.basis = basis
        plain = basis == "the interval"
        whole = "the whole interval" if plain else f"the whole of {basis}"
        lower_end = "the interval's lower end" if plain else f"the lower end of {basis}"
        upper_end = "the interval's upper end" if plain else f"the upper end of {basis}"
        if higher_is_better:
            self.useful = f"{whole} lies above the minimum useful effect."
            self.better_not_useful = (f"{basis} excludes zero but reaches below the minimum useful effect. "
                                      "This is not evidence that the candidate is useless.")
            self.better_no_threshold = f"{basis} excludes zero (no minimum useful effect was registered)."
            self.worse = f"{whole} lies below zero."
            self.noninferior = f"Non-inferior within the registered margin: {lower_end} lies above minus the margin."
            self.not_noninferior = f"Non-inferiority not shown: {basis} reaches below minus the registered margin."
        else:
            self.useful = f"lower is better, and {whole} lies below minus the minimum useful effect."
            self.better_not_useful = (f"lower is better; {whole} lies below zero but reaches above minus "
                                      "the minimum useful effect. This is not evidence that the candidate is useless.")
            self.better_no_threshold = (f"lower is better, and {whole} lies below zero (no minimum "
                                        "useful effect was registered).")
            self.worse = f"lower is better, and {whole} lies above zero."
            self.noninferior = (f"Non-inferior within the registered margin: lower is better, and {upper_end} "
                                "lies below the margin.")
            self.not_noninferior = (f"Non-inferiority not shown: lower is better, and {basis} reaches above "
                                    "the registered margin.")
