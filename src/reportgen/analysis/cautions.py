"""Cautions a reviewer expects beside claims, beyond each result's own warnings:

- exploratory slices: how many comparisons were looked at in slices nobody registered
  before the run, and that none of them is adjusted for that number;
- a longitudinal reference missing from windows in which a candidate was observed: the
  pooled comparison then mixes periods (time confounding).
"""

from __future__ import annotations

from reportgen.analysis.results import ExperimentAnalysis
from reportgen.model.numbers import counted


def exploratory_caution(analysis: ExperimentAnalysis) -> str | None:
    """One sentence for every comparison made inside an exploratory slice, or None."""
    exploratory = [s for s in analysis.slices if not s.registered and s.n_units]
    m = sum(len(s.group.comparisons) + len(s.group.paired) for s in exploratory)
    if not m:
        return None
    alpha = analysis.run.contract.alpha
    if m == 1:
        return ("the only comparison in an exploratory slice (not registered before the run): it suggests where "
                "to look next and confirms nothing; its p-value is not adjusted for the slices that could have "
                "been looked at")
    slices = counted(len(exploratory), 'exploratory slice')
    return (f"one of {m} comparisons looked at in {slices} (not registered before the run); "
            f"none of their p-values or intervals is adjusted for that number: at α = {alpha:g}, about "
            f"{m * alpha:.2g} of them would fall below α by chance alone even with no real difference")


def reference_gaps(analysis: ExperimentAnalysis) -> dict[str, tuple[str, ...]]:
    """Longitudinal runs: for each candidate, the windows in which it has calls and the
    reference has none."""
    contract = analysis.run.contract
    if contract.design != "longitudinal":
        return {}
    gaps: dict[str, tuple[str, ...]] = {}
    for candidate in contract.candidates:
        missing = tuple(
            str(w.block) for w in analysis.blocks
            if any(s.service == candidate and s.first_calls for s in w.services)
            and not any(s.service == contract.baseline and s.first_calls for s in w.services))
        if missing:
            gaps[candidate] = missing
    return gaps


def reference_gap_caution(analysis: ExperimentAnalysis, candidate: str, windows: tuple[str, ...]) -> str:
    ref = analysis.run.contract.baseline
    where = f"window{'s' if len(windows) != 1 else ''} {', '.join(windows)}"
    return (f"time confounding: the reference {ref} has no calls in {where}, where {candidate} has; the pooled "
            f"comparison sets {candidate}'s later periods against {ref}'s earlier ones, so a change over time "
            "(grader, tasks, network) cannot be told apart from a difference between the services")
