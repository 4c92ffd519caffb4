"""Percentile bootstrap intervals for paired, clustered and repeated designs.

Every bootstrap here is vectorised: the resamples of one chunk are drawn as a single
index array and the statistic is computed along its last axis, so Python loops run over
chunks only. Chunks are sized so that the largest per-chunk array stays near
``CHUNK_BYTES``, which bounds memory whatever the resample count. The generator is
``numpy.random.default_rng(seed)``; the seed and resample count are recorded in the result.

Interval: the percentile interval, the ``(1 - level)/2`` and ``(1 + level)/2`` quantiles
of the bootstrap distribution with linear interpolation, and the standard error is its
sample sd (n − 1): the definitions of ``scipy.stats.bootstrap(method="percentile")``,
which is the oracle for :func:`paired_bootstrap`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .paired import ArrayLike, as_pairs, as_vector
from .results import CLUSTER_BOOTSTRAP, HIERARCHICAL_BOOTSTRAP, PAIRED_BOOTSTRAP, Estimate, check_confidence_level
from .warnings import FEW_UNITS, MIN_UNITS, NO_DATA, NOT_FINITE, ONE_CLUSTER, ONE_PAIR, ONE_TASK, ZERO_WIDTH

# Small enough that a chunk's index and value arrays stay in the processor cache (measured:
# 32 MiB chunks ran 20-40% slower), large enough that per-chunk Python overhead is negligible.
CHUNK_BYTES = 2 * 2**20
# Below this many independent units the percentile interval is known to be too narrow.

Resampling = Literal["rows", "pair-counts", "clusters", "tasks-then-repetitions"]
Statistic = Literal["mean", "median"] | Callable[..., np.ndarray]

PAIRED_ASSUMPTIONS = (
    "pairs are independent of one another (one pair per task, seed or split)",
    "each resample keeps pairs together: the same indices are drawn for both arms",
    "there are enough pairs for the percentile interval to be accurate",
    "the comparison was chosen before the data were seen",
)
CLUSTER_ASSUMPTIONS = (
    "clusters are independent of one another; items within a cluster may be correlated",
    "the estimate is the mean over all items, so larger clusters weigh more",
    "there are enough clusters for the percentile interval to be accurate",
)
HIERARCHICAL_ASSUMPTIONS = (
    "tasks are independent draws from the tasks one cares about",
    "the repetitions of a task are exchangeable (same task, same conditions)",
    "row i pairs b[i] with a[i] on the same task and repetition",
    "every task weighs the same, whatever its number of repetitions",
    "there are enough tasks for the percentile interval to be accurate",
)



@dataclass(frozen=True, kw_only=True)
class BootstrapEstimate(Estimate):
    """A percentile bootstrap interval with what is needed to reproduce it.

    ``n`` counts rows (pairs or items); ``n_clusters`` counts the resampled units
    (clusters or tasks) and is None for a row-level bootstrap. ``standard_error`` is the
    sd of the bootstrap distribution, None when the estimate is undefined.
    """

    n: int
    n_clusters: int | None
    statistic: str
    resampling: Resampling
    resamples: int
    seed: int
    standard_error: float | None


@dataclass(frozen=True)
class _Setup:
    """Validated settings shared by every bootstrap."""

    resamples: int
    seed: int
    level: float


def _check_setup(resamples: int, seed: int, confidence_level: float) -> _Setup:
    if int(resamples) != resamples or resamples < 1:
        raise ValueError(f"resamples must be a positive whole number, got {resamples!r}; "
                         "10_000 is a good default.")
    if isinstance(seed, bool) or int(seed) != seed or seed < 0:
        raise ValueError(f"seed must be a non-negative whole number, got {seed!r}; take it "
                         "from the contract so the interval can be reproduced.")
    return _Setup(int(resamples), int(seed), check_confidence_level(confidence_level))


def _chunks(resamples: int, elements_per_resample: int) -> Iterator[slice]:
    """Consecutive slices of ``range(resamples)`` sized to keep a float64 chunk array
    of ``size × elements_per_resample`` near ``CHUNK_BYTES``."""
    size = max(1, CHUNK_BYTES // (8 * max(1, elements_per_resample)))
    for start in range(0, resamples, size):
        yield slice(start, min(resamples, start + size))


def _small_uint(high: int) -> type[np.integer]:
    """The narrowest unsigned dtype holding ``range(high)``: bounded draws of narrow
    integers are generated several per 32-bit word, much faster than int64 ones."""
    if high <= 2**8:
        return np.uint8
    if high <= 2**16:
        return np.uint16
    return np.uint64


def _undefined(setup: _Setup, n_clusters: int | None, **fields) -> BootstrapEstimate:
    nan = float("nan")
    return BootstrapEstimate(
        estimate=nan, low=nan, high=nan, confidence_level=setup.level, warnings=(NO_DATA,),
        n=0, n_clusters=n_clusters, resamples=setup.resamples, seed=setup.seed,
        standard_error=None, **fields,
    )


def _percentile_result(distribution: np.ndarray, estimate: float, setup: _Setup, *,
                       warnings: tuple[str, ...], zero_width: str = ZERO_WIDTH,
                       **fields) -> BootstrapEstimate:
    """The percentile interval of ``distribution`` as a :class:`BootstrapEstimate`.

    ``zero_width`` is the warning to record when every resample gave the same value
    (the caller knows the specific reason, for example a single cluster).
    """
    bad = int(np.count_nonzero(~np.isfinite(distribution)))
    if bad:
        low = high = se = float("nan")
        warnings += (NOT_FINITE.format(k=bad, resamples=distribution.size),)
    else:
        alpha = (1.0 - setup.level) / 2.0
        low, high = (float(v) for v in np.quantile(distribution, [alpha, 1.0 - alpha]))
        se = float(np.std(distribution, ddof=1)) if distribution.size > 1 else 0.0
        if low == high:
            warnings += (zero_width,)
    return BootstrapEstimate(
        estimate=float(estimate), low=low, high=high, confidence_level=setup.level,
        warnings=warnings, resamples=setup.resamples, seed=setup.seed, standard_error=se,
        **fields,
    )


def _few_units(n: int, unit: str) -> tuple[str, ...]:
    return (FEW_UNITS.format(n=n, unit=unit),) if 1 < n < MIN_UNITS else ()


# ---------------------------------------------------------------- paired bootstrap

def _resolve_statistic(statistic: Statistic) -> tuple[str, Callable[[np.ndarray], np.ndarray]]:
    """A name for the record and a reducer along the last axis of a 2-D array."""
    if isinstance(statistic, str):
        if statistic == "mean":
            return "mean", lambda x: np.mean(x, axis=-1)
        if statistic == "median":
            return "median", lambda x: np.median(x, axis=-1)
        raise ValueError(f'statistic must be "mean", "median" or a function, got {statistic!r}.')
    if not callable(statistic):
        raise ValueError(f"statistic must be \"mean\", \"median\" or a function f(x, axis), "
                         f"got {statistic!r}.")
    name = getattr(statistic, "__name__", type(statistic).__name__)

    def reduce(x: np.ndarray) -> np.ndarray:
        values = np.asarray(statistic(x, axis=-1), dtype=np.float64)
        if values.shape != x.shape[:-1]:
            raise ValueError(f"statistic {name!r} returned shape {values.shape} for input of "
                             f"shape {x.shape}: it must reduce along axis=-1.")
        return values

    return name, reduce


def _row_distribution(b: np.ndarray, a: np.ndarray, reduce: Callable[[np.ndarray], np.ndarray],
                      linear: bool, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """statistic(b*) − statistic(a*) with one index array per chunk shared by both arms."""
    n = b.size
    d = b - a
    out = np.empty(resamples)
    for part in _chunks(resamples, n):
        index = rng.integers(0, n, size=(part.stop - part.start, n))
        if linear:
            # For the mean, mean(b*) − mean(a*) = mean(d*): one gather instead of two.
            out[part] = np.mean(d[index], axis=-1)
        else:
            out[part] = reduce(b[index]) - reduce(a[index])
    return out


def _pair_count_distribution(b: np.ndarray, a: np.ndarray, rng: np.random.Generator,
                             resamples: int) -> np.ndarray:
    """mean(b*) − mean(a*) for 0/1 data from multinomial counts of the four (b, a) pairs.

    Resampling n rows with replacement is exactly drawing Multinomial(n, observed shares)
    counts of the distinct pairs, and the mean difference depends on the counts only.
    """
    n = b.size
    codes = (2 * b + a).astype(np.intp)  # (b, a): (0,0)→0, (0,1)→1, (1,0)→2, (1,1)→3
    shares = np.bincount(codes, minlength=4) / n
    difference = np.array([0.0, -1.0, 1.0, 0.0])
    out = np.empty(resamples)
    for part in _chunks(resamples, 4):
        counts = rng.multinomial(n, shares, size=part.stop - part.start)
        out[part] = counts @ difference / n
    return out


def _is_binary(x: np.ndarray) -> bool:
    return bool(np.all((x == 0.0) | (x == 1.0)))


def paired_bootstrap(b: ArrayLike, a: ArrayLike, statistic: Statistic = "mean",
                     resamples: int = 10_000, seed: int = 0, confidence_level: float = 0.95,
                     *, pair_counts: bool = True) -> BootstrapEstimate:
    """Percentile interval of ``statistic(b) − statistic(a)`` over paired resamples.

    Each resample draws n row indices once and applies them to both arms, so the
    pairing is kept. ``statistic`` is "mean", "median" or a function called as
    ``statistic(x, axis=-1)`` on a (resamples × n) array. For 0/1 data and the mean,
    ``pair_counts`` draws multinomial counts of the distinct (b, a) pairs instead of rows:
    the same distribution for O(resamples) work. Oracle:
    ``scipy.stats.bootstrap((b, a), ..., paired=True, method="percentile")``.
    """
    setup = _check_setup(resamples, seed, confidence_level)
    b_arr, a_arr = as_pairs(b, a)
    name, reduce = _resolve_statistic(statistic)
    # The mean is linear: its paired difference is the mean of the row differences.
    linear = isinstance(statistic, str) and statistic == "mean"
    use_counts = pair_counts and linear and _is_binary(b_arr) and _is_binary(a_arr)
    resampling: Resampling = "pair-counts" if use_counts else "rows"
    common = dict(method=PAIRED_BOOTSTRAP, assumptions=PAIRED_ASSUMPTIONS,
                  statistic=name, resampling=resampling)
    n = b_arr.size
    if n == 0:
        return _undefined(setup, None, **common)
    rng = np.random.default_rng(setup.seed)
    if use_counts:
        distribution = _pair_count_distribution(b_arr, a_arr, rng, setup.resamples)
    else:
        distribution = _row_distribution(b_arr, a_arr, reduce, linear, rng, setup.resamples)
    if linear:
        estimate = float(np.mean(b_arr - a_arr))
    else:
        estimate = float((reduce(b_arr[np.newaxis]) - reduce(a_arr[np.newaxis]))[0])
    return _percentile_result(distribution, estimate, setup, warnings=_few_units(n, "pairs"),
                              zero_width=ONE_PAIR if n == 1 else ZERO_WIDTH,
                              n=n, n_clusters=None, **common)


# ---------------------------------------------------------------- cluster bootstrap

# One label per row (task or cluster names, or integer codes).
Labels = Sequence[object] | np.ndarray


def _labels(labels: Labels, n: int, name: str) -> np.ndarray:
    """Integer codes 0..K-1 for the distinct ``labels`` (one per row)."""
    array = np.asarray(labels)
    if array.ndim != 1 or array.size != n:
        raise ValueError(f"{name} must give one label per row: expected {n}, got shape "
                         f"{array.shape}.")
    return np.unique(array, return_inverse=True)[1].ravel()


def cluster_bootstrap(values: ArrayLike, clusters: Labels, resamples: int = 10_000,
                      seed: int = 0, confidence_level: float = 0.95) -> BootstrapEstimate:
    """Percentile interval of the mean of all ``values``, resampling whole clusters.

    A resample draws K clusters with replacement from the K observed ones; its statistic
    is (sum of their values) / (number of their items), the ratio that equals the
    estimate on the original data. Oracle: ``scipy.stats.bootstrap`` on the per-cluster
    (sum, size) pairs with ``paired=True`` and the same ratio statistic.
    """
    setup = _check_setup(resamples, seed, confidence_level)
    x = as_vector(values, "values")
    codes = _labels(clusters, x.size, "clusters")
    common = dict(method=CLUSTER_BOOTSTRAP, assumptions=CLUSTER_ASSUMPTIONS,
                  statistic="mean", resampling="clusters")
    if x.size == 0:
        return _undefined(setup, 0, **common)
    sums = np.bincount(codes, weights=x)
    sizes = np.bincount(codes).astype(np.float64)
    k = sums.size
    rng = np.random.default_rng(setup.seed)
    distribution = np.empty(setup.resamples)
    for part in _chunks(setup.resamples, k):
        index = rng.integers(0, k, size=(part.stop - part.start, k))
        distribution[part] = sums[index].sum(axis=-1) / sizes[index].sum(axis=-1)
    return _percentile_result(distribution, float(np.mean(x)), setup,
                              warnings=_few_units(k, "clusters"),
                              zero_width=ONE_CLUSTER if k == 1 else ZERO_WIDTH,
                              n=int(x.size), n_clusters=k, **common)


# ---------------------------------------------------------------- hierarchical bootstrap

@dataclass(frozen=True)
class _Tasks:
    """Differences grouped by task: task t owns ``flat[start[t] : start[t] + size[t]]``."""

    flat: np.ndarray
    start: np.ndarray
    size: np.ndarray

    @property
    def balanced(self) -> bool:
        return bool(np.all(self.size == self.size[0]))

    def mean_of_task_means(self) -> float:
        sums = np.add.reduceat(self.flat, self.start)
        return float(np.mean(sums / self.size))


def _group_by_task(d: np.ndarray, codes: np.ndarray) -> _Tasks:
    # A stable sort keeps each task's repetitions in their input order.
    order = np.argsort(codes, kind="stable")
    size = np.bincount(codes)
    start = np.concatenate(([0], np.cumsum(size)[:-1]))
    return _Tasks(flat=d[order], start=start, size=size)


def _balanced_distribution(tasks: _Tasks, rng: np.random.Generator,
                           resamples: int) -> np.ndarray:
    """Two-stage resampling when every task has R repetitions: the flat differences form
    a (T × R) matrix, and one chunk gathers (chunk × T × R) cells at once."""
    t, r = tasks.size.size, int(tasks.size[0])
    out = np.empty(resamples)
    for part in _chunks(resamples, t * r):
        size = part.stop - part.start
        chosen = rng.integers(0, t, size=(size, t))
        repetition = rng.integers(0, r, size=(size, t, r), dtype=_small_uint(r))
        index = (chosen * r)[..., np.newaxis] + repetition  # int64, one pass
        # With equal repetitions the mean of task means is the mean of all cells.
        out[part] = tasks.flat[index].reshape(size, -1).mean(axis=-1)
    return out


def _unbalanced_distribution(tasks: _Tasks, rng: np.random.Generator,
                             resamples: int) -> np.ndarray:
    """Two-stage resampling with unequal repetitions, without padding: each chosen task
    contributes exactly its own number of draws, laid end to end and summed per task."""
    t = tasks.size.size
    rows = int(tasks.flat.size)  # expected draws per resample: T × mean repetitions
    out = np.empty(resamples)
    for part in _chunks(resamples, rows):
        size = part.stop - part.start
        chosen = rng.integers(0, t, size=size * t)
        counts = tasks.size[chosen]
        # Repetition index floor(u · n_task) is uniform over the task's own repetitions.
        index = rng.random(int(counts.sum()))
        index *= np.repeat(counts.astype(np.float64), counts)
        drawn = index.astype(np.int64)
        drawn += np.repeat(tasks.start[chosen], counts)
        bounds = np.concatenate(([0], np.cumsum(counts)[:-1]))
        task_means = np.add.reduceat(tasks.flat[drawn], bounds) / counts
        out[part] = task_means.reshape(size, t).mean(axis=-1)
    return out


def hierarchical_bootstrap(b: ArrayLike, a: ArrayLike, tasks: Labels,
                           resamples: int = 10_000, seed: int = 0,
                           confidence_level: float = 0.95) -> BootstrapEstimate:
    """Percentile interval of the mean over tasks of the task-mean difference ``b - a``.

    Rows are paired outcomes (``b[i]``, ``a[i]``) of one repetition of task ``tasks[i]``.
    A resample draws T tasks with replacement, then, within each drawn task, as many
    repetitions as it has, with replacement (Davison & Hinkley 1997, §3.8). Repetitions
    may differ between tasks. Oracle: the exact variance of this two-stage distribution,
    ``(var(task means) + mean(within-task variance / n_task)) / T`` (population variances).
    """
    setup = _check_setup(resamples, seed, confidence_level)
    b_arr, a_arr = as_pairs(b, a)
    codes = _labels(tasks, b_arr.size, "tasks")
    common: dict[str, Any] = dict(method=HIERARCHICAL_BOOTSTRAP,
                  assumptions=HIERARCHICAL_ASSUMPTIONS, statistic="mean of task means",
                  resampling="tasks-then-repetitions")
    if b_arr.size == 0:
        return _undefined(setup, 0, **common)
    grouped = _group_by_task(b_arr - a_arr, codes)
    n_tasks = int(grouped.size.size)
    rng = np.random.default_rng(setup.seed)
    if grouped.balanced:
        distribution = _balanced_distribution(grouped, rng, setup.resamples)
    else:
        distribution = _unbalanced_distribution(grouped, rng, setup.resamples)
    warnings = (ONE_TASK,) if n_tasks == 1 else _few_units(n_tasks, "tasks")
    return _percentile_result(distribution, grouped.mean_of_task_means(), setup,
                              warnings=warnings, n=int(b_arr.size), n_clusters=n_tasks,
                              **common)


def binomial_resamples(n: np.ndarray, rates: np.ndarray, resamples: int, seed: int,
                       max_cells: int = 2_000_000) -> Iterator[np.ndarray]:
    """The parametric bootstrap of pass counts: ``resamples`` draws of every rate, each a
    binomial count at its observed rate over its n (the counts are sufficient, so no rows
    are resampled), yielded in chunks of shape (k, len(n)) to bound memory."""
    n = np.asarray(n, dtype=np.int64)
    rng = np.random.default_rng(seed)
    chunk = max(1, max_cells // len(n))
    for start in range(0, resamples, chunk):
        size = min(resamples, start + chunk) - start
        yield rng.binomial(n, rates, size=(size, len(n))) / n


def mean_resamples(samples: Sequence[np.ndarray], resamples: int, seed: int,
                   max_cells: int = 2_000_000) -> Iterator[np.ndarray]:
    """The nonparametric bootstrap of several independent samples' means: ``resamples``
    draws, each resampling every sample with replacement within itself, yielded in
    chunks of shape (k, len(samples)) to bound memory."""
    arrays = [np.asarray(x, dtype=np.float64) for x in samples]
    rng = np.random.default_rng(seed)
    chunk = max(1, max_cells // max(1, sum(a.size for a in arrays)))
    for start in range(0, resamples, chunk):
        size = min(resamples, start + chunk) - start
        yield np.column_stack([a[rng.integers(0, a.size, size=(size, a.size))].mean(axis=1) for a in arrays])
