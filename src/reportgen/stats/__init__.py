"""Statistics used by reportgen, usable on their own (for example from a notebook).

Every function returns a frozen result that records its estimate, interval,
confidence level, method and assumptions.

``scipy.stats`` (a second to import) is imported by the functions that use it, when
first called: a program that only reads results (a build that finds its version up
to date, say) does not pay for it.
"""

from .bootstrap import (
                        BootstrapEstimate,
                        binomial_resamples,
                        cluster_bootstrap,
                        hierarchical_bootstrap,
                        mean_resamples,
                        paired_bootstrap,
)
from .clusters import min_clusters, sign_flip_test, too_few_clusters
from .decisions import Test, Verdict, decide
from .means import MeanComparison, welch_difference
from .multiple import holm
from .paired import PairedBinaryResult, PairedEstimate, mcnemar_exact, paired_binary, paired_t
from .proportions import RateComparison, compare_rates, fisher_exact, newcombe_difference, wilson
from .results import PAIRED_METHODS, Estimate, RateEstimate, TestResult, check_confidence_level

__all__ = [
                        "PAIRED_METHODS",
                        "BootstrapEstimate",
                        "Estimate",
                        "MeanComparison",
                        "PairedBinaryResult",
                        "PairedEstimate",
                        "RateComparison",
                        "RateEstimate",
                        "Test",
                        "TestResult",
                        "Verdict",
                        "binomial_resamples",
                        "check_confidence_level",
                        "cluster_bootstrap",
                        "compare_rates",
                        "decide",
                        "fisher_exact",
                        "hierarchical_bootstrap",
                        "holm",
                        "mcnemar_exact",
                        "mean_resamples",
                        "min_clusters",
                        "newcombe_difference",
                        "paired_binary",
                        "paired_bootstrap",
                        "paired_t",
                        "sign_flip_test",
                        "too_few_clusters",
                        "welch_difference",
                        "wilson",
]
