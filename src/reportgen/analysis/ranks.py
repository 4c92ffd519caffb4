"""Rank intervals and tie groups for a leaderboard, from simultaneous intervals of every
pairwise difference (Mogstad, Romano, Shaikh and Wilhelm, "Inference for Ranks", Review
of Economic Studies 2024; the ``csranks`` package).

Every pair of services gets a two-sided interval of its difference at level
``1 - alpha / m`` (Bonferroni over the ``m = k(k-1)/2`` pairs of the ``k`` ranked
services): Newcombe's hybrid-score interval for pass rates, Welch's interval for mean
scores. With probability at least ``1 - alpha`` every one of those intervals covers its
true difference at once, and on that event:

- the best rank of service j is 1 + the number of services whose interval places them
  above j, the worst is k - the number placed below j: every service's true rank (every
  rank of a tie) lies in its range, jointly for the whole board;
- a group is placed above the next only where every service of the one is separated
  from every service of the other by those same intervals.

No resampling: the ranges depend on the counts (or scores) alone, so identical data give
identical ranges and groups, and the order the services are listed in changes nothing.
The score intervals stay valid at 0/n and n/n (where a parametric bootstrap at the
observed rate has no variance and makes any rank look certain).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from reportgen import stats
from reportgen.analysis.results import GroupAnalysis, RankResult, ServiceResult
from reportgen.model.metric import PrimaryMetric
from reportgen.stats.warnings import MIN_UNITS

FEW_FOR_RANK = ("only {n} {unit}: with fewer than " f"{MIN_UNITS} the pairwise intervals behind this rank rest on "
                "large-sample approximations, so the range may be too narrow")
SPREAD_UNKNOWN = ("fewer than two scores: the spread is unknown, so no rank range can be given; this service "
                  "is separated from no other")


@dataclass(frozen=True)
class _Board:
    names: list[str]
    values: np.ndarray  # pass rate or mean score per service
    separated: np.ndarray  # separated[i, j]: i is placed above j (better) by the pairwise interval
    known: np.ndarray  # False where the service's spread is unknown (no range)
    sizes: list[int]


def pairwise_level(confidence_level: float, k: int) -> float:
    """The level of each pairwise interval: Bonferroni over the k(k-1)/2 pairs."""
    pairs = max(1, k * (k - 1) // 2)
    return 1 - (1 - confidence_level) / pairs


def rank_services(group: GroupAnalysis, confidence_level: float, by_score: bool = False,
                  higher_is_better: bool = True) -> tuple[RankResult, ...]:
    """Simultaneous rank ranges and tie groups (rank 1 is the best: the highest value,
    or the lowest when lower is better). Services with no data are not ranked."""
    if by_score:
        services = [s for s in group.services if s.compared_scores]
    else:
        services = [s for s in group.services if s.first_pass.denominator]
    k = len(services)
    if k < 2:
        return ()
    level = pairwise_level(confidence_level, k)
    board = (_score_board(services, level) if by_score else _rate_board(services, level))
    if not higher_is_better:
        board = _Board(board.names, -board.values, board.separated.T.copy(), board.known, board.sizes)
    above = board.separated.sum(axis=0)  # services placed above each one
    below = board.separated.sum(axis=1)
    from scipy.stats import rankdata  # when computed: see reportgen.stats

    point = rankdata(-board.values, method="average")
    order = sorted(range(k), key=lambda i: (point[i], board.names[i]))
    groups = _groups(order, board.separated)
    unit = "scores" if by_score else "planned calls"
    out = []
    for i in order:
        warnings: tuple[str, ...] = ()
        if not board.known[i]:
            warnings = (SPREAD_UNKNOWN,)
        elif board.sizes[i] < MIN_UNITS:
            warnings = (FEW_FOR_RANK.format(n=board.sizes[i], unit=unit),)
        low, high = (int(1 + above[i]), int(k - below[i])) if board.known[i] else (None, None)
        out.append(RankResult(board.names[i], float(point[i]), low, high, groups[i], confidence_level,
                              k * (k - 1) // 2, level, PrimaryMetric(by_score, higher_is_better), warnings))
    return tuple(out)


def _groups(order: list[int], separated: np.ndarray) -> dict[int, int]:
    """Cut the board (best first) only where everything above the cut is separated
    from everything below it."""
    groups: dict[int, int] = {}
    number = 1
    for position, i in enumerate(order):
        if position and separated[np.ix_(order[:position], order[position:])].all():
            number += 1
        groups[i] = number
    return groups


def _rate_board(services: list[ServiceResult], level: float) -> _Board:
    """Newcombe hybrid-score intervals of every difference, from each service's Wilson
    interval at the pairwise level (the same formula as ``stats.newcombe_difference``)."""
    wilsons = [stats.wilson(s.first_pass.numerator or 0, s.first_pass.denominator or 0, level) for s in services]
    p = np.array([w.estimate for w in wilsons])
    lo = np.array([w.low for w in wilsons])
    hi = np.array([w.high for w in wilsons])
    d = p[:, None] - p[None, :]
    # low of p_i - p_j: d - sqrt((p_i - l_i)^2 + (u_j - p_j)^2)
    low = d - np.sqrt((p - lo)[:, None] ** 2 + (hi - p)[None, :] ** 2)
    separated = low > 0
    np.fill_diagonal(separated, False)
    return _Board([s.service for s in services], p, separated, np.ones(len(services), dtype=bool),
                  [s.first_pass.denominator or 0 for s in services])


def _score_board(services: list[ServiceResult], level: float) -> _Board:
    """Welch intervals of every difference of mean scores; a pair whose interval is
    undefined (a side with fewer than two scores, or no spread on either) is never
    separated."""
    k = len(services)
    scores = [np.asarray(s.compared_scores, dtype=float) for s in services]
    separated = np.zeros((k, k), dtype=bool)
    for i in range(k):
        for j in range(i + 1, k):
            interval = stats.welch_difference(scores[i], scores[j], level).difference
            if math.isfinite(interval.low) and interval.low < interval.high:
                separated[i, j] = interval.low > 0
                separated[j, i] = interval.high < 0
    return _Board([s.service for s in services], np.array([float(np.mean(x)) for x in scores]), separated,
                  np.array([x.size >= 2 for x in scores]), [int(x.size) for x in scores])
