"""How many clusters a clustered decision needs, and the cluster-level test it reads.

The test is the sign-flip (randomisation) test of the clusters' summed differences:
under "no difference" each cluster's sum is symmetric about zero, so flipping the signs
of whole clusters gives the null distribution of their total, exactly, whatever the
distribution within a cluster. With K clusters there are 2^K sign patterns; when every
cluster points the same way only the observed pattern and its mirror are as extreme, so
the smallest attainable two-sided p is 2 / 2^K. A direction at level alpha needs
2 / 2^K < alpha, hence at least ``min_clusters(alpha)`` clusters (6 at alpha = 0.05:
2/32 = 0.0625, 2/64 = 0.031); with fewer, no distribution-free cluster-level test can
reject and the decision is "not decidable".
"""

from __future__ import annotations

from collections.abc import Sequence


import numpy as np
from numpy.typing import ArrayLike

from .paired import as_vector
from .results import TestResult

SIGN_FLIP_ASSUMPTIONS = (
    "clusters are independent of one another; items within a cluster may be correlated",
    "under no difference each cluster's summed difference is symmetric about zero",
)
EXACT_UP_TO = 16  # clusters enumerated exactly (2^16 sign patterns); more are sampled
TOO_FEW_CLUSTERS = ("only {k} clusters: the smallest two-sided p a cluster-level sign-flip test can reach is "
                    "2/2^{k} = {p:.4g}, not below α = {alpha:g}; a direction needs at least {need} clusters, "
                    "so no decision is read from these data")


def min_clusters(alpha: float) -> int:
    """The fewest clusters K with 2 / 2^K < alpha."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    k = 1
    while 2.0 / 2.0**k >= alpha:
        k += 1
    return k


def too_few_clusters(k: int, alpha: float) -> str | None:
    """The reason no direction can be read from ``k`` clusters, or None when enough."""
    need = min_clusters(alpha)
    if k >= need:
        return None
    return TOO_FEW_CLUSTERS.format(k=k, p=2.0 / 2.0**k, alpha=alpha, need=need)


def sign_flip_test(values: Sequence[float] | np.ndarray, clusters: ArrayLike, resamples: int = 100_000,
                   seed: int = 0) -> TestResult:
    """Two-sided sign-flip test that the mean of ``values`` (differences, one per item) is
    zero, flipping whole clusters. Exact (all 2^K patterns) for K <= 16 clusters; beyond,
    ``resamples`` seeded random patterns with the observed one counted (p >= 1/(R+1)).
    Oracle: ``scipy.stats.permutation_test((sums,), np.sum, permutation_type="samples")``."""
    x = as_vector(values, "values")
    codes = np.unique(np.asarray(clusters), return_inverse=True)[1].ravel()
    if codes.size != x.size:
        raise ValueError(f"clusters must give one label per value: expected {x.size}, got {codes.size}.")
    sums = np.bincount(codes, weights=x) if x.size else np.zeros(0)
    k = int(sums.size)
    observed = abs(float(sums.sum()))
    # Rounding of a sum of floats: equal totals in exact arithmetic count as equal.
    tolerance = 1e-9 * max(float(np.abs(sums).sum()), np.finfo(float).tiny)
    if k == 0:
        p = 1.0
    elif k <= EXACT_UP_TO:
        patterns = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1) * 2 - 1
        totals = np.abs(patterns @ sums)
        p = float(np.count_nonzero(totals >= observed - tolerance)) / 2**k
    else:
        rng = np.random.default_rng(seed)
        signs = rng.integers(0, 2, size=(resamples, k), dtype=np.int8) * 2 - 1
        totals = np.abs(signs @ sums)
        p = (float(np.count_nonzero(totals >= observed - tolerance)) + 1) / (resamples + 1)
    return TestResult(min(1.0, p), float(sums.sum()), "sum_of_cluster_differences", "cluster-sign-flip",
                      assumptions=SIGN_FLIP_ASSUMPTIONS)


def smallest_p(k: int) -> float:
    """The smallest two-sided p a sign-flip test over ``k`` clusters can give."""
    return 1.0 if k <= 0 else min(1.0, 2.0 / 2.0**k)


__all__ = ["min_clusters", "sign_flip_test", "smallest_p", "too_few_clusters"]
