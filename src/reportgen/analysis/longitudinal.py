"""Longitudinal runs: each service's change between the first and the last window.

Windows are the blocks of the registered schedule (for example one per week); the
per-window rates and differences to the reference are the per-block analysis.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from reportgen import stats
from reportgen.analysis.results import ChangeResult
from reportgen.model.source import ValidatedRun
from reportgen.stats import Estimate
from reportgen.stats import warnings as stats_warnings

if TYPE_CHECKING:
    from reportgen.analysis.results import GroupAnalysis


def window_changes(run: ValidatedRun, windows: tuple[GroupAnalysis, ...]) -> tuple[ChangeResult, ...]:
    """Each service's change from the first window to the last, absolute (Newcombe) and,
    for services other than the reference, relative to the reference: the change of its
    difference to the reference, which removes whatever moved every service alike (the
    grader, the tasks, the network). That interval is a parametric bootstrap of the four
    pass counts (binomial at each observed rate; counts are sufficient)."""
    contract = run.contract
    populated = [w for w in windows if any(s.first_pass.denominator for s in w.services)]
    if len(populated) < 2:
        return ()
    first, last = populated[0], populated[-1]
    level = contract.confidence_level
    out = []
    for service in contract.services:
        a, b = first.service(service.id).first_pass, last.service(service.id).first_pass
        x1, n1, x2, n2 = a.numerator, a.denominator, b.numerator, b.denominator
        compared = stats.compare_rates(x2, n2, x1, n1, level)
        relative = None
        if service.id != contract.baseline:
            r1, r2 = first.service(contract.baseline).first_pass, last.service(contract.baseline).first_pass
            # A window with no logged call of the reference (or of the service) measures
            # nothing: its planned calls, all missing, would read as a 0% window.
            logged = all(w.service(s).first_calls for w in (first, last) for s in (service.id, contract.baseline))
            relative = relative_change((x1, n1 if logged else 0), (x2, n2), (r1.numerator, r1.denominator),
                                       (r2.numerator, r2.denominator), level,
                                       contract.bootstrap_resamples, contract.bootstrap_seed)
        evidence = first.service(service.id).first_calls + last.service(service.id).first_calls
        out.append(ChangeResult(service.id, str(first.block), str(last.block), compared.difference, compared.test,
                                relative, evidence))
    return _holm_adjusted(out)


def _holm_adjusted(changes: list[ChangeResult]) -> tuple[ChangeResult, ...]:
    """Every service's change is tested at once ("has any of them got worse?"), so the
    p-values are adjusted together; no decision is read from a change, but a reader
    scanning the table for the smallest p should see it corrected."""
    if len(changes) < 2:
        return tuple(changes)
    adjusted = stats.holm([c.fisher.p_value for c in changes])
    return tuple(dataclasses.replace(c, adjusted_p_value=p) for c, p in zip(changes, adjusted))


RELATIVE_ASSUMPTIONS = (
    "calls are independent, each service's pass probability stable within a window",
    "the reference service measures what moved every service alike between the windows",
    "percentile interval of a parametric bootstrap of the four pass counts",
)


def relative_change(s1: tuple[int, int], s2: tuple[int, int], r1: tuple[int, int], r2: tuple[int, int],
                    level: float, resamples: int, seed: int) -> Estimate:
    """(s2 - r2) - (s1 - r1) for four (passes, n) counts, with a percentile interval."""
    counts = np.array([s2, r2, s1, r1], dtype=float)
    if (counts[:, 1] == 0).any():
        return Estimate(float("nan"), float("nan"), float("nan"), level, "parametric-bootstrap",
                        RELATIVE_ASSUMPTIONS, (stats_warnings.EMPTY_WINDOW,))
    rates = counts[:, 0] / counts[:, 1]
    signs = np.array([1.0, -1.0, -1.0, 1.0])
    distribution = np.concatenate([draws @ signs for draws in stats.binomial_resamples(
        counts[:, 1].astype(int), rates, resamples, seed)])
    tail = (1 - level) / 2
    low, high = np.quantile(distribution, [tail, 1 - tail])
    warnings: tuple[str, ...] = ()
    if low == high:
        warnings = (stats_warnings.ZERO_WIDTH,)
    return Estimate(float(rates @ signs), float(low), float(high), level, "parametric-bootstrap",
                    RELATIVE_ASSUMPTIONS, warnings)
