"""Benchmark: reportgen's bootstraps against scipy.stats.bootstrap on the same work.

Run:  python benchmarks/bootstrap.py

1. Paired percentile bootstrap of a mean difference, n = 2,000 numeric pairs,
   10,000 resamples: ``reportgen.stats.paired_bootstrap`` vs ``scipy.stats.bootstrap``
   (method="percentile", paired=True, vectorized=True). Times are the median of several
   runs after one warm-up; peak memory is what tracemalloc sees during one extra run
   (numpy reports its buffers to tracemalloc). reportgen must be at least 2× faster;
   the script exits with status 1 otherwise.
2. Hierarchical bootstrap, 2,000 tasks × 10 repetitions × 10,000 resamples.
"""

from __future__ import annotations

import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable

import numpy as np
import scipy
import scipy.stats

from reportgen import stats

PAIRS = 2_000
TASKS, REPETITIONS = 2_000, 10
RESAMPLES = 10_000
RUNS = 5
REQUIRED_SPEEDUP = 2.0


def median_seconds(run: Callable[[], object], runs: int) -> float:
    run()  # warm-up: imports, allocator, caches
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_mib(run: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def paired_comparison() -> float:
    rng = np.random.default_rng(2024)
    a = rng.normal(70.0, 12.0, PAIRS)
    b = a + rng.normal(0.5, 4.0, PAIRS)

    def ours() -> stats.BootstrapEstimate:
        return stats.paired_bootstrap(b, a, "mean", resamples=RESAMPLES, seed=1)

    def reference() -> object:
        return scipy.stats.bootstrap((b, a), mean_difference, paired=True, vectorized=True,
                                     method="percentile", n_resamples=RESAMPLES, rng=1)

    ours_s, scipy_s = median_seconds(ours, RUNS), median_seconds(reference, RUNS)
    ours_mib, scipy_mib = peak_mib(ours), peak_mib(reference)
    mine, theirs = ours(), reference().confidence_interval
    print(f"paired bootstrap of the mean: n = {PAIRS:,} pairs, {RESAMPLES:,} resamples, "
          f"median of {RUNS} runs")
    print(f"{'':22}{'reportgen':>14}{'scipy ' + scipy.__version__:>16}")
    print(f"{'time (s)':22}{ours_s:>14.3f}{scipy_s:>16.3f}")
    print(f"{'peak memory (MiB)':22}{ours_mib:>14.1f}{scipy_mib:>16.1f}")
    print(f"{'95% interval':22}{f'[{mine.low:.4f}, {mine.high:.4f}]':>14}"
          f"{f'[{theirs.low:.4f}, {theirs.high:.4f}]':>16}")
    ratio = scipy_s / ours_s
    print(f"speed-up scipy/reportgen: {ratio:.2f}x (required: at least {REQUIRED_SPEEDUP:.0f}x)")
    return ratio


def hierarchical_timing() -> None:
    rng = np.random.default_rng(7)
    tasks = np.repeat(np.arange(TASKS), REPETITIONS)
    effect = np.repeat(rng.normal(0.02, 0.1, TASKS), REPETITIONS)
    a = (rng.random(tasks.size) < 0.6).astype(float)
    b = (rng.random(tasks.size) < np.clip(0.6 + effect, 0.0, 1.0)).astype(float)

    def run() -> stats.BootstrapEstimate:
        return stats.hierarchical_bootstrap(b, a, tasks, resamples=RESAMPLES, seed=1)

    seconds = median_seconds(run, 3)
    mib = peak_mib(run)
    result = run()
    print(f"\nhierarchical bootstrap: {TASKS:,} tasks × {REPETITIONS} repetitions, "
          f"{RESAMPLES:,} resamples, median of 3 runs")
    print(f"time {seconds:.3f} s, peak memory (tracemalloc) {mib:.1f} MiB, "
          f"95% interval [{result.low:.4f}, {result.high:.4f}]")


def main() -> int:
    ratio = paired_comparison()
    hierarchical_timing()
    # ru_maxrss is KiB on Linux: the whole process, interpreter and libraries included.
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nprocess peak resident memory (getrusage, whole run): {rss:.0f} MiB")
    return 0 if ratio >= REQUIRED_SPEEDUP else 1


if __name__ == "__main__":
    sys.exit(main())
