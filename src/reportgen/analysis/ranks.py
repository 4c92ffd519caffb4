"""Rank intervals for a leaderboard, from a parametric bootstrap of the pass counts."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from reportgen.analysis.results import GroupAnalysis, RankResult


def rank_services(group: GroupAnalysis, confidence_level: float, resamples: int, seed: int) -> tuple[RankResult, ...]:
    """Rank intervals from a parametric bootstrap of the pass counts (binomial draws at
    each service's observed rate: the counts are sufficient, so no rows are resampled)."""
    services = [s for s in group.services if s.first_pass.denominator]
    if len(services) < 2:
        return ()
    n = np.array([s.first_pass.denominator for s in services])
    rates = np.array([s.first_pass.estimate for s in services])
    rng = np.random.default_rng(seed)
    tail = (1 - confidence_level) / 2
    ranks = np.empty((resamples, len(services)), dtype=np.float32)
    chunk = max(1, 2_000_000 // len(services))  # bounded memory, whatever the size
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        draws = rng.binomial(n, rates, size=(stop - start, len(services))) / n
        ranks[start:stop] = rankdata(-draws, axis=1, method="average")
    low = np.floor(np.quantile(ranks, tail, axis=0)).astype(int)
    high = np.ceil(np.quantile(ranks, 1 - tail, axis=0)).astype(int)
    point = rankdata(-rates, method="average")
    order = np.lexsort((np.array([s.service for s in services]), point))
    groups = np.zeros(len(services), dtype=int)
    group_number, leader = 0, None
    for index in order:
        # A new group starts at the first service the current leader is separated from.
        if leader is None or low[index] > high[leader]:
            group_number += 1
            leader = index
        groups[index] = group_number
    return tuple(
        RankResult(services[i].service, float(point[i]), int(low[i]), int(high[i]), int(groups[i]),
                   confidence_level, resamples, seed)
        for i in order)
