"""Statistics used by reportgen, usable on their own (for example from a notebook).

Every function returns a frozen result that records its estimate, interval,
confidence level, method and assumptions.
"""

from .bootstrap import (
                        BootstrapEstimate,
                        binomial_resamples,
                        cluster_bootstrap,
                        hierarchical_bootstrap,
                        paired_bootstrap,
)
from .decisions import Test, Verdict, decide
from .multiple import holm
from .paired import PairedBinaryResult, PairedEstimate, mcnemar_exact, paired_binary, paired_t
from .proportions import RateComparison, compare_rates, fisher_exact, newcombe_difference, wilson
from .results import Estimate, RateEstimate, TestResult, check_confidence_level

__all__ = [
    "Estimate", "RateEstimate", "TestResult", "Verdict", "Test", "RateComparison",
    "wilson", "newcombe_difference", "fisher_exact", "compare_rates", "decide", "check_confidence_level",
    "PairedEstimate", "PairedBinaryResult", "BootstrapEstimate",
    "paired_t", "mcnemar_exact", "paired_binary",
    "paired_bootstrap", "cluster_bootstrap", "hierarchical_bootstrap",
    "holm", "binomial_resamples",
]
