"""Seeded simulation of the repeated design (tasks × repetitions), where no closed form
fits: the report runs a paired t test on per-task mean pass rates."""

from __future__ import annotations

import numpy as np
from scipy.stats import t as student_t


def repeated_power(tasks: int, repetitions: int, baseline: float, effect: float, task_sd: float,
                   alpha: float, simulations: int, seed: int) -> float:
    """Share of ``simulations`` runs whose two-sided paired t test on task means rejects at
    ``alpha``. Each run draws every task's baseline rate from a beta distribution with mean
    ``baseline`` and SD ``task_sd`` (a fixed rate when it is 0); the candidate's rate on a
    task is the baseline's plus ``effect`` (capped at 1); each service then passes
    Binomial(repetitions, rate) times on each task. The same seed for every size, so
    the power of successive sizes is compared on common random numbers."""
    if tasks < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    shape = (simulations, tasks)
    if task_sd > 0:
        k = baseline * (1 - baseline) / (task_sd * task_sd) - 1
        rates = rng.beta(baseline * k, (1 - baseline) * k, size=shape)
    else:
        rates = np.full(shape, baseline)
    base = rng.binomial(repetitions, rates) / repetitions
    cand = rng.binomial(repetitions, np.minimum(1.0, rates + effect)) / repetitions
    d = cand - base
    mean = d.mean(axis=1)
    sd = d.std(axis=1, ddof=1)
    crit = student_t.ppf(1 - alpha / 2, tasks - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = np.abs(mean) / (sd / np.sqrt(tasks))
    # All differences equal: no spread, the test rejects when they are not zero.
    reject = np.where(sd > 0, stat > crit, mean != 0)
    return float(reject.mean())
