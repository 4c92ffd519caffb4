"""Adjusting p-values for several comparisons made together (for example each candidate
of a leaderboard against the baseline).

Holm (1979) step-down: sort the m p-values, ``p_(1) <= ... <= p_(m)``; the adjusted value
of the i-th smallest is ``max_{j <= i} min(1, (m - j + 1) · p_(j))``, so the adjusted
p-values keep the order of the raw ones and never exceed 1.
Oracle: ``statsmodels.stats.multitest.multipletests(method="holm")``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def holm(p_values: Sequence[float] | np.ndarray) -> tuple[float, ...]:
    """Holm step-down adjusted p-values, in the order given."""
    raw = np.asarray(p_values, dtype=np.float64)
    if raw.ndim != 1:
        raise ValueError(f"p_values must be a flat list, got shape {raw.shape}.")
    for i, p in enumerate(raw):
        if math.isnan(p) or not 0.0 <= p <= 1.0:
            raise ValueError(f"p_values[{i}] is {p!r}: a p-value must lie in [0, 1]. "
                             "Leave comparisons without a test out of the family.")
    m = raw.size
    # A stable sort keeps tied p-values in input order, so ties get identical results.
    order = np.argsort(raw, kind="stable")
    multipliers = m - np.arange(m)
    stepped = np.minimum(1.0, multipliers * raw[order])
    # The running maximum is what makes the procedure step-down: a p-value can never be
    # adjusted below one that was rejected before it.
    adjusted_sorted = np.maximum.accumulate(stepped)
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return tuple(float(v) for v in adjusted)
