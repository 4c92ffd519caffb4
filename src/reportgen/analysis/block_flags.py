"""Flag a shown difference that comes mostly from one block of the schedule.

A difference that lives in one block points to a time effect (a bad hour of the
network, a grader's drift) rather than to the services.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from reportgen.analysis.results import BlockFlag
from reportgen.model.claim_keys import Pair
from reportgen.stats import Estimate

if TYPE_CHECKING:
    from reportgen.analysis.results import ComparisonResult, GroupAnalysis, PairedComparison


MIN_FLAG_BLOCKS = 3


def block_flags(overall: GroupAnalysis, blocks: tuple[GroupAnalysis, ...]) -> tuple[BlockFlag, ...]:
    """Comparisons whose difference comes mostly from one block.

    Each block's contribution is its part of the overall estimate (the contributions
    sum to it): for two rates, x_c,b / N_c - x_b,b / N_b; for pairs, the sum of the
    block's differences over all pairs. A block is flagged when its contribution has the
    sign of the overall difference and exceeds max(1/2, 2/blocks) of it, and only when
    the overall interval excludes zero."""
    if len(blocks) < MIN_FLAG_BLOCKS:
        return ()
    flags = []
    for index, comparison in enumerate(overall.comparisons):
        n_c, n_b = comparison_denominators(overall, comparison)
        parts: list[tuple[str, float]] = []
        for block in blocks:
            c = next((x for x in block.comparisons if x.candidate == comparison.candidate), None)
            if c is None or not n_c or not n_b:
                continue
            cand, base = block.service(c.candidate).first_pass, block.service(c.baseline).first_pass
            parts.append((_block_id(block), cand.numerator / n_c - base.numerator / n_b))
        flags += _flag(Pair(comparison.candidate, comparison.baseline), comparison.difference, parts, len(blocks))
    for paired in overall.paired:
        parts = _paired_parts(paired, blocks)
        flags += _flag(Pair(paired.candidate, paired.baseline), paired.difference, parts, len(blocks))
    return tuple(flags)


def _paired_parts(paired: PairedComparison, blocks: tuple[GroupAnalysis, ...]) -> list[tuple[str, float]]:
    """Each block's part of the mean paired difference. A unit's value is the mean of its
    calls, so a block holding k of a unit's K calls on one side contributes k/K of that
    side's block mean (for a pair, k = K = 1)."""
    n = paired.difference.n
    if not n:
        return []
    totals = {r.unit: (len(r.candidate_calls), len(r.baseline_calls)) for r in paired.rows}
    parts: list[tuple[str, float]] = []
    for block in blocks:
        part = 0.0
        for row in (r for p in block.paired for r in p.rows):
            if row.candidate is None or row.baseline is None or row.unit not in totals:
                continue
            k_c, k_b = totals[row.unit]
            # A side with no call (a missing pair member) has a fixed value of its own block.
            part += (row.candidate * (len(row.candidate_calls) / k_c if k_c else 1.0)
                     - row.baseline * (len(row.baseline_calls) / k_b if k_b else 1.0))
        parts.append((_block_id(block), part / n))
    return parts


def _block_id(block: GroupAnalysis) -> str:
    if block.block is None:
        raise ValueError("a block's analysis has no block id")
    return block.block


def comparison_denominators(group: GroupAnalysis, comparison: ComparisonResult) -> tuple[int, int]:
    return (group.service(comparison.candidate).first_pass.denominator,
            group.service(comparison.baseline).first_pass.denominator)


def _flag(pair: Pair, difference: Estimate, parts: list[tuple[str, float]], n_blocks: int) -> list[BlockFlag]:
    total = difference.estimate
    # Only a difference the interval shows can "come from" somewhere; noise has no source,
    # and a zero-width interval shows nothing.
    shown = difference.low < difference.high and (difference.low > 0 or difference.high < 0)
    if not parts or not shown or not np.isfinite(total) or abs(total) < 1e-12:
        return []
    # The parts must add up to the difference they divide (they do not when a unit has
    # calls left out, or its calls are not all in the registered blocks): a share of a
    # sum that is not the total would be a made-up number.
    if not np.isclose(sum(p for _, p in parts), total, rtol=1e-9, atol=1e-12):
        return []
    block, part = max(parts, key=lambda p: p[1] / total)
    if part / total > max(0.5, 2 / n_blocks):
        return [BlockFlag(pair, block, part, total, n_blocks)]
    return []
