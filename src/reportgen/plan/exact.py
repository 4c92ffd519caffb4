"""Exact power of the discrete tests the report runs, by enumeration.

- Fisher's exact test, two-sided (the report's ``stats.fisher_exact``: tables no more
  likely than the observed one, relative tolerance 1e-7), for two independent binomial
  arms: the unconditional power ``sum P(x1) P(x2) [p(x1, x2) <= alpha]`` over every pair of
  counts, as G*Power's "exact unconditional power of the conditional test". For each
  total of passes ``s`` the conditional test rejects exactly the tables whose
  hypergeometric probability is at most a threshold ``c_s``; the thresholds of every
  ``s`` are found at once (one sort of a matrix), then every table is compared with its
  threshold. Counts whose binomial probability is below 1e-14 are left out of the sum
  (their total weight is below 1e-13), and so are hypergeometric tables more than 10
  standard deviations from the centre, which are rejected by any alpha above 1e-20.
- McNemar's exact test (``stats.mcnemar_exact``) over the discordant count: given ``d``
  discordant pairs the test rejects when the smaller of the two counts is at most the
  largest ``c`` with ``2 * BinomCDF(c; d, 1/2) <= alpha``; the power sums over ``d``.
- Newcombe's hybrid-score interval (the report's difference of two rates) for
  non-inferiority: the probability that its lower bound lies above ``-margin``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln
from scipy.stats import binom

TAIL = 1e-14  # binomial probability below which a count is left out of the power sum
SPREAD = 10.0  # hypergeometric standard deviations kept around the centre
TOLERANCE = float(np.log1p(1e-7))  # the report's relative tolerance for "no more likely"


def _support(n: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """The counts of Binomial(n, p) that carry weight, and their probabilities."""
    if p <= 0.0 or p >= 1.0:
        return np.array([0 if p <= 0.0 else n]), np.array([1.0])
    lo = int(binom.ppf(TAIL, n, p)) if p > 0 else 0
    hi = int(binom.isf(TAIL, n, p)) if p < 1 else n
    lo, hi = max(0, lo - 1), min(n, hi + 1)
    x = np.arange(lo, hi + 1)
    return x, binom.pmf(x, n, p)


def _log_factorials(n: int) -> np.ndarray:
    """log k! for k = 0..n, looked up by index rather than computed per table."""
    return gammaln(np.arange(n + 1, dtype=float) + 1.0)


def _log_comb(lf: np.ndarray, n: int | np.ndarray, k: np.ndarray) -> np.ndarray:
    return lf[n] - lf[k] - lf[n - k]


def fisher_thresholds(n1: int, n2: int, totals: np.ndarray, alpha: float) -> np.ndarray:
    """For each total of passes ``s``: the largest log hypergeometric probability of a
    table the two-sided test rejects at ``alpha`` (``-inf`` when it rejects none)."""
    big_n = n1 + n2
    s = totals.astype(float)
    mean = s * n1 / big_n
    sd = np.sqrt(np.maximum(s * (big_n - s) * n1 * n2 / (big_n * big_n * max(big_n - 1, 1)), 0.0))
    first = np.maximum(np.maximum(0, totals - n2), np.floor(mean - SPREAD * sd - 1).astype(int))
    last = np.minimum(np.minimum(n1, totals), np.ceil(mean + SPREAD * sd + 1).astype(int))
    width = int((last - first).max()) + 1
    x = first[:, None] + np.arange(width)[None, :]
    inside = x <= last[:, None]
    xs = np.where(inside, x, first[:, None])
    lf = _log_factorials(big_n)
    logf = _log_comb(lf, n1, xs) + _log_comb(lf, n2, totals[:, None] - xs) - _log_comb(lf, big_n, totals)[:, None]
    logf = np.where(inside, np.clip(logf, -700.0, 0.0), -800.0)  # padding sorts first, weighs nothing
    order = np.sort(logf, axis=1)
    weights = np.where(order > -750.0, np.exp(order), 0.0)
    cumulative = np.cumsum(weights, axis=1)
    # p of the table at each sorted place: the weight of every table no more likely than
    # it (with the tolerance), found for all rows at once by offsetting each row's keys.
    offsets = (np.arange(len(totals)) * 2000.0)[:, None]
    keys = (order + offsets).ravel()
    upto = np.searchsorted(keys, keys + TOLERANCE, side="right") - 1
    p = cumulative.ravel()[upto].reshape(order.shape) / cumulative[:, -1:]
    rejected = (p <= alpha) & (order > -750.0)
    # p grows along each sorted row: the rejected tables are a prefix of it.
    # (after the padding, which sorts first). Tables beyond the window are less likely
    # than any in it: rejected whenever its least likely table is.
    count = rejected.sum(axis=1)
    padding = (order <= -750.0).sum(axis=1)
    threshold = np.full(len(totals), -np.inf)
    has = count > 0
    threshold[has] = order[has, padding[has] + count[has] - 1]
    return threshold


def fisher_power(n1: int, n2: int, p1: float, p2: float, alpha: float) -> float:
    """Exact power of the two-sided Fisher test at ``alpha`` (a rejection in either
    direction counts, as in G*Power) with ``n1`` and ``n2`` calls at true rates ``p1``, ``p2``."""
    if n1 < 1 or n2 < 1:
        return 0.0
    x1, w1 = _support(n1, p1)
    x2, w2 = _support(n2, p2)
    totals = np.arange(x1[0] + x2[0], x1[-1] + x2[-1] + 1)
    threshold = fisher_thresholds(n1, n2, totals, alpha)
    s = x1[:, None] + x2[None, :]
    lf = _log_factorials(n1 + n2)
    logf = _log_comb(lf, n1, x1)[:, None] + _log_comb(lf, n2, x2)[None, :] - _log_comb(lf, n1 + n2, s)
    limit = threshold[s - totals[0]]
    # The threshold is itself a table's value, computed the same way up to rounding.
    reject = np.isfinite(limit) & (logf <= limit + 1e-9 * np.abs(np.where(np.isfinite(limit), limit, 0.0)))
    return float(min(1.0, (w1[:, None] * w2[None, :] * reject).sum()))


def mcnemar_power(pairs: int, discordant: float, effect: float, alpha: float) -> float:
    """Exact power of the two-sided exact McNemar test with ``pairs`` pairs when a pair is
    discordant with probability ``discordant`` and B-only minus A-only is ``effect``."""
    d = np.arange(pairs + 1)
    weight = binom.pmf(d, pairs, discordant)
    theta = (discordant + effect) / (2.0 * discordant)  # P(B only | discordant)
    # Largest c with 2 * cdf(c; d, 1/2) <= alpha, for every d at once (-1: none).
    c = binom.ppf(alpha / 2.0, d, 0.5).astype(int)
    c = np.where(2.0 * binom.cdf(c, d, 0.5) <= alpha * (1 + 1e-12), c, c - 1)
    upper = binom.sf(d - c - 1, d, theta)  # B-only count >= d - c
    lower = binom.cdf(c, d, theta)  # B-only count <= c
    conditional = np.where(c >= 0, upper + lower, 0.0)
    return float(min(1.0, (weight * conditional).sum()))


def _wilson_bounds(x: np.ndarray, n: int, z: float) -> tuple[np.ndarray, np.ndarray]:
    p = x / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = (z / (1 + z2 / n)) * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    low = np.where(x == 0, 0.0, np.maximum(0.0, centre - half))
    high = np.where(x == n, 1.0, np.minimum(1.0, centre + half))
    return low, high


def newcombe_noninferiority_power(n: int, p_candidate: float, p_baseline: float, margin: float,
                                  z: float) -> float:
    """Probability that the Newcombe hybrid-score interval of candidate − baseline (at
    the two-sided level of ``z``) has its lower bound above ``-margin``, with ``n`` calls
    per service at the true rates given."""
    x1, w1 = _support(n, p_candidate)
    x2, w2 = _support(n, p_baseline)
    lo1, _ = _wilson_bounds(x1.astype(float), n, z)
    _, hi2 = _wilson_bounds(x2.astype(float), n, z)
    r1, r2 = x1 / n, x2 / n
    low = (r1[:, None] - r2[None, :]) - np.sqrt((r1 - lo1)[:, None] ** 2 + (hi2 - r2)[None, :] ** 2)
    return float(min(1.0, (w1[:, None] * w2[None, :] * (low > -margin)).sum()))
