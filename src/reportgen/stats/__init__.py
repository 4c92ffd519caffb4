"""Statistics used by reportgen, usable on their own (for example from a notebook).

Every function returns a frozen result that records its estimate, interval,
confidence level, method and assumptions.
"""

from .bootstrap import BootstrapEstimate, cluster_bootstrap, hierarchical_bootstrap, paired_bootstrap
from .decisions import Verdict, decide
from .multiple import holm
from .paired import PairedBinaryResult, PairedEstimate, mcnemar_exact, paired_binary, paired_t
from .proportions import fisher_exact, newcombe_difference, wilson
from .results import Estimate, TestResult

__all__ = [
    "Estimate", "TestResult", "Verdict",
    "wilson", "newcombe_difference", "fisher_exact", "decide",
    "PairedEstimate", "PairedBinaryResult", "BootstrapEstimate",
    "paired_t", "mcnemar_exact", "paired_binary",
    "paired_bootstrap", "cluster_bootstrap", "hierarchical_bootstrap",
    "holm",
]
