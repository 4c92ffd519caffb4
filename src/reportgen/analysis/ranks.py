"""Rank intervals for a leaderboard, from a parametric bootstrap of the pass counts."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from reportgen import stats
from reportgen.analysis.results import GroupAnalysis, RankResult


def rank_services(group: GroupAnalysis, confidence_level: float, resamples: int, seed: int,
                  by_score: bool = False, higher_is_better: bool = True) -> tuple[RankResult, ...]:
    """Rank intervals from a bootstrap: for pass rates a parametric one of the pass
    counts (binomial draws at each service's observed rate: the counts are sufficient,
    so no rows are resampled); for a score, each service's scores resampled with
    replacement. Rank 1 is the best: the highest value, or the lowest when lower is better."""
    if by_score:
        services = [s for s in group.services if s.compared_scores]
        values = np.array([np.mean(s.compared_scores) for s in services])
        resampled = stats.mean_resamples([np.array(s.compared_scores) for s in services], resamples, seed)
    else:
        services = [s for s in group.services if s.first_pass.denominator]
        values = np.array([s.first_pass.estimate for s in services])
        resampled = stats.binomial_resamples(np.array([s.first_pass.denominator for s in services]), values,
                                             resamples, seed)
    if len(services) < 2:
        return ()
    sign = -1.0 if higher_is_better else 1.0
    tail = (1 - confidence_level) / 2
    # Tied services share every rank of the tie (four tied services: ranks 1-4), so the
    # range runs from the best rank a service reaches to the worst.
    best, worst = [], []
    for draws in resampled:
        best.append(rankdata(sign * draws, axis=1, method="min").astype(np.int32))
        worst.append(rankdata(sign * draws, axis=1, method="max").astype(np.int32))
    low = np.floor(np.quantile(np.concatenate(best), tail, axis=0)).astype(int)
    high = np.ceil(np.quantile(np.concatenate(worst), 1 - tail, axis=0)).astype(int)
    point = rankdata(sign * values, method="average")
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
