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
    from reportgen.analysis.results import ComparisonResult, GroupAnalysis


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
        parts = []
        for block in blocks:
            c = next((x for x in block.comparisons if x.candidate == comparison.candidate), None)
            if c is None or not n_c or not n_b:
                continue
            cand, base = block.service(c.candidate).first_pass, block.service(c.baseline).first_pass
            parts.append((block.block, cand.numerator / n_c - base.numerator / n_b))
        flags += _flag(Pair(comparison.candidate, comparison.baseline), comparison.difference, parts, len(blocks))
    for paired in overall.paired:
        n = paired.difference.n
        parts = []
        for block in blocks:
            d = [r.difference for p in block.paired for r in p.rows if r.difference is not None]
            parts.append((block.block, sum(d) / n if n else 0.0))
        flags += _flag(Pair(paired.candidate, paired.baseline), paired.difference, parts, len(blocks))
    return tuple(flags)


def comparison_denominators(group: GroupAnalysis, comparison: ComparisonResult) -> tuple[int, int]:
    return (group.service(comparison.candidate).first_pass.denominator,
            group.service(comparison.baseline).first_pass.denominator)


def _flag(pair: Pair, difference: Estimate, parts: list[tuple[str, float]], n_blocks: int) -> list[BlockFlag]:
    total = difference.estimate
    # Only a difference the interval shows can "come from" somewhere; noise has no source.
    shown = difference.low > 0 or difference.high < 0
    if not parts or not shown or not np.isfinite(total) or abs(total) < 1e-12:
        return []
    block, part = max(parts, key=lambda p: p[1] / total)
    if part / total > max(0.5, 2 / n_blocks):
        return [BlockFlag(pair, block, part, total, n_blocks)]
    return []
