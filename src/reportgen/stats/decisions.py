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

_TEXT: dict[str, str] = {
    "blocked_by_critical": "Blocked by a critical failure, whatever the interval.",
    "useful_improvement": "Useful improvement shown: the whole interval lies above the "
    "minimum useful effect.",
    "improvement_not_useful_size": "Improvement shown, useful size not proven: the interval "
    "excludes zero but reaches below the minimum useful effect. This is not evidence that "
    "the candidate is useless.",
    "candidate_worse": "Candidate worse: the whole interval lies below zero.",
    "no_difference_shown": "No difference shown: the interval contains zero. This is NOT "
    "evidence that the two are equivalent.",
}


@dataclass(frozen=True)
class Verdict:
    code: VerdictCode
    text: str
    low: float
    high: float
    min_useful_effect: float | None
    noninferiority_margin: float | None
    noninferior: bool | None  # None when no margin was registered
    noninferiority_text: str | None


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
    text = _TEXT[code]
    if code == "improvement_not_useful_size" and min_useful_effect is None:
        text = "Improvement shown: the interval excludes zero (no minimum useful effect was registered)."
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
    return Verdict(code, text, low, high, min_useful_effect, noninferiority_margin, noninferior, ni_text)
