"""Pre-registered decisions from an interval of the effect (candidate - baseline,
oriented so that positive means the candidate is better)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

VerdictCode = Literal[
    "blocked_by_critical",
    "useful_improvement",
    "improvement_not_useful_size",
    "candidate_worse",
    "no_difference_shown",
]

LABELS: dict[str, str] = {
    "blocked_by_critical": "blocked by a critical failure",
    "useful_improvement": "useful improvement shown",
    "improvement_not_useful_size": "improvement shown, useful size not proven",
    "candidate_worse": "candidate worse",
    "no_difference_shown": "no difference shown",
}
REASONS: dict[str, str] = {
    "blocked_by_critical": "a critical failure of the candidate blocks adoption whatever the interval.",
    "useful_improvement": "the whole interval lies above the minimum useful effect.",
    "improvement_not_useful_size": "the interval excludes zero but reaches below the minimum "
    "useful effect. This is not evidence that the candidate is useless.",
    "candidate_worse": "the whole interval lies below zero.",
    "no_difference_shown": "the interval contains zero. This is NOT evidence that the two are "
    "equivalent: the data may be too few to tell.",
}


@dataclass(frozen=True)
class Verdict:
    code: VerdictCode
    label: str
    reason: str
    low: float
    high: float
    min_useful_effect: float | None
    noninferiority_margin: float | None
    noninferior: bool | None  # None when no margin was registered
    noninferiority_text: str | None

    @property
    def text(self) -> str:
        """The whole verdict as one or two sentences."""
        ni = f" {self.noninferiority_text}" if self.noninferiority_text else ""
        return f"{self.label[0].upper()}{self.label[1:]}: {self.reason}{ni}"


def decide(
    low: float,
    high: float,
    min_useful_effect: float | None = None,
    noninferiority_margin: float | None = None,
    critical_failure: bool = False,
) -> Verdict:
    """The pre-registered verdict for an effect interval ``[low, high]``."""
    threshold = 0.0 if min_useful_effect is None else float(min_useful_effect)
    if critical_failure:
        code: VerdictCode = "blocked_by_critical"
    elif low > 0 and low > threshold:
        code = "useful_improvement" if min_useful_effect is not None else "improvement_not_useful_size"
    elif low > 0:
        code = "improvement_not_useful_size"
    elif high < 0:
        code = "candidate_worse"
    else:
        code = "no_difference_shown"
    label, reason = LABELS[code], REASONS[code]
    if code == "improvement_not_useful_size" and min_useful_effect is None:
        label, reason = "improvement shown", "the interval excludes zero (no minimum useful effect was registered)."
    noninferior = None
    ni_text = None
    if noninferiority_margin is not None:
        noninferior = low > -float(noninferiority_margin)
        ni_text = (
            "Non-inferior within the registered margin: the interval's lower end lies above "
            "minus the margin."
            if noninferior
            else "Non-inferiority not shown: the interval reaches below minus the registered margin."
        )
    return Verdict(code, label, reason, low, high, min_useful_effect, noninferiority_margin, noninferior, ni_text)
