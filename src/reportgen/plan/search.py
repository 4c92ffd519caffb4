"""The smallest sample size that reaches a target power.

The exact power of a discrete test (Fisher, McNemar, an interval of counts) is
saw-toothed in n: it can reach the target at one n and fall below it again at n + 1. The
rule used here, stated on every plan:

    n is the smallest size whose power is at least the target at n and at every size
    from n up to n + h (h = max(10, ceil(n / 100)), at most 25), and whose power at n − 1
    is below the target. Every size in that range is computed exactly.

The sizes just below n are computed too, so a plan also names the first size at which
the power reached the target before falling below it again. Tests whose power rises
with n (t tests) need no window: n is simply the first size that reaches the target.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

MAX_CALLS = 20_000  # per service (or per pair or task): beyond this the plan says so instead


class TooLarge(Exception):
    """No size up to the limit reaches the target power."""


@dataclass(frozen=True)
class SizeFound:
    n: int  # the planned size (per service, pair or task)
    power: float  # exact power at n
    first: int  # the first size in the window that reached the target
    checked_to: int  # the power is >= target at every size from n to here
    sawtooth: bool  # the power fell below the target again between `first` and `n`
    rule: str


def window(n: int) -> int:
    return min(25, max(10, math.ceil(n / 100)))


SAWTOOTH_RULE = ("the smallest n whose exact power is at least the target at n and at every n up to "
                 "n + max(10, ceil(n/100)) (at most 25 more), with the power at n − 1 below it "
                 "(exact power of a discrete test is saw-toothed in n)")
MONOTONE_RULE = "the smallest n whose power reaches the target (the power rises with n)"
SIMULATED_RULE = ("the smallest number of tasks whose simulated power reaches the target, found by bisection on "
                  "the same random numbers for every size (the power is taken to rise with the number of tasks)")


def smallest_n(power_at: Callable[[int], float], target: float, guess: int, low: int = 2,
               sawtooth: bool = True, limit: int = MAX_CALLS) -> SizeFound:
    """The size the stated rule picks; ``guess``: a starting point (a normal approximation)."""
    cache: dict[int, float] = {}

    def power(n: int) -> float:
        if n not in cache:
            cache[n] = power_at(n)
        return cache[n]

    crossing = _crossing(power, target, max(low, min(guess, limit)), low, limit)
    if not sawtooth:
        return SizeFound(crossing, power(crossing), crossing, crossing, False, MONOTONE_RULE)
    start = max(low, crossing - 5)
    n = crossing
    while True:
        end = n + window(n)
        if end > limit:
            raise TooLarge
        below = [m for m in range(start, end + 1) if power(m) < target]
        n = below[-1] + 1 if below else start
        if n + window(n) <= end:
            break
    reached = [m for m in range(start, n + 1) if power(m) >= target]
    first = reached[0] if reached else n
    return SizeFound(n, power(n), first, end, first < n, SAWTOOTH_RULE)


def _crossing(power: Callable[[int], float], target: float, guess: int, low: int, limit: int) -> int:
    """A size whose power reaches the target while the size before does not (bisection
    between a size below and one above the target, found by doubling from ``guess``)."""
    lo, hi = guess, guess
    # A bracket around the guess first (a normal approximation is seldom far off).
    near_low, near_high = max(low, int(guess * 0.9)), min(limit, int(guess * 1.25) + 1)
    if near_low < guess and power(near_low) < target <= power(near_high):
        lo, hi = near_low, near_high
    elif power(guess) >= target:
        while lo > low and power(lo) >= target:
            hi, lo = lo, max(low, lo // 2)
        if power(lo) >= target:
            return lo
    else:
        while power(hi) < target:
            lo = hi
            if hi >= limit:
                raise TooLarge
            hi = min(limit, hi * 2)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if power(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi
