"""Statistics used by reportgen, usable on their own (for example from a notebook).

Every function returns a frozen result that records its estimate, interval,
confidence level, method and assumptions.
"""

from .decisions import Verdict, decide
from .proportions import fisher_exact, newcombe_difference, wilson
from .results import Estimate, TestResult

__all__ = [
    "Estimate", "TestResult", "Verdict",
    "wilson", "newcombe_difference", "fisher_exact", "decide",
]
