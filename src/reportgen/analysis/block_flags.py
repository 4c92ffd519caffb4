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
    from reportgen.analysis.results import ComparisonResult, GroupAnalysis, PairedComparison, ServiceResult


MIN_FLAG_BLOCKS = 3


def block_flags(overall: GroupAnalysis, blocks: tuple[GroupAnalysis, ...]) -> tuple[BlockFlag, ...]:
    """Comparisons whose difference comes mostly from one block.

    Each block's contribution is its part of the overall estimate (the contributions
    sum to it): for two rates, x_c,b / N_c - x_b,b / N_b; for two samples of scores, the
    same with each side's sum of scores in the block; for pairs, the sum of the
    block's differences over all pairs. Each block also carries a weight in the estimate:
    its share of the calls the estimate is built from (for task means with unequal
    repetitions, k/K of each task's calls on each side, averaged over tasks and sides).
    Scores are measured from their pooled mean first (see ``_independent_parts``).
    A block is flagged when its contribution has the sign of the overall difference and
    exceeds max(1/2, twice the block's weight) of it, and only when the overall interval
    excludes zero: a block that carries half the weight contributing half the difference
    is no sign of a time effect."""
    if len(blocks) < MIN_FLAG_BLOCKS:
        return ()
    flags = []
    for comparison in overall.comparisons:
        parts = _independent_parts(overall, blocks, comparison)
        flags += _flag(Pair(comparison.candidate, comparison.baseline), comparison.difference, parts, len(blocks))
    for paired in overall.paired:
        parts = _paired_parts(paired, blocks)
        flags += _flag(Pair(paired.candidate, paired.baseline), paired.difference, parts, len(blocks))
    return tuple(flags)


def _independent_parts(overall: GroupAnalysis, blocks: tuple[GroupAnalysis, ...],
                       comparison: ComparisonResult) -> list[tuple[str, float, float]]:
    """Each block's part of a difference of two independent samples, and its weight.
    Each side's estimate is a mean of its values (a pass 1 and a non-pass 0 over the
    planned calls; or the scores compared, failure_score entries among them), so a
    block's part is the sum of its values on each side over that side's overall count,
    and its weight its share of each side's values.

    Scores are first measured from their pooled mean: the parts then do not depend on
    where the score's scale starts (a block holding more of one side's values than of
    the other's would otherwise carry a part of the scale's origin). A pass rate's scale
    starts at a non-pass."""
    scored = comparison.metric.scored
    overall_c, overall_b = (overall.service(s) for s in (comparison.candidate, comparison.baseline))
    centre = 0.0
    if scored:
        pooled = overall_c.compared_scores + overall_b.compared_scores
        centre = sum(pooled) / len(pooled) if pooled else 0.0

    def side(group: GroupAnalysis, service: str) -> tuple[float, int]:
        """(sum of the values measured from ``centre``, how many) of one side."""
        s = group.service(service)
        if scored:
            return sum(v - centre for v in s.compared_scores), len(s.compared_scores)
        return s.first_pass.numerator, s.first_pass.denominator

    n_c, n_b = side(overall, comparison.candidate)[1], side(overall, comparison.baseline)[1]
    compared = [block for block in blocks if any(x.candidate == comparison.candidate for x in block.comparisons)]
    counted = [(block.block or "", side(block, comparison.candidate), side(block, comparison.baseline))
               for block in compared]
    w_c = sum(c[1] for _, c, _ in counted)
    w_b = sum(b[1] for _, _, b in counted)
    if not (n_c and n_b and w_c and w_b):
        return []
    if scored and not all(_held_by(overall.service(s), [block.service(s) for block in compared])
                          for s in (comparison.candidate, comparison.baseline)):
        return []
    return [(name, c[0] / n_c - b[0] / n_b, (c[1] / w_c + b[1] / w_b) / 2) for name, c, b in counted]


def _held_by(whole: ServiceResult, blocks: list[ServiceResult]) -> bool:
    """Whether the blocks hold exactly a side's compared scores: its scored calls, and
    as many failure_score entries. A block's share of the plan can pad it with entries
    the whole sample does not have (then two wrong parts can still add up to the
    difference)."""
    pads = len(whole.compared_scores) - len(whole.scored_calls)
    return (sum(len(b.scored_calls) for b in blocks) == len(whole.scored_calls)
            and sum(len(b.compared_scores) - len(b.scored_calls) for b in blocks) == pads)


def _paired_parts(paired: PairedComparison, blocks: tuple[GroupAnalysis, ...]) -> list[tuple[str, float, float]]:
    """Each block's part of the mean paired difference, and its weight. A unit's value is
    the mean of its calls, so a block holding k of a unit's K calls on one side
    contributes k/K of that side's block mean (for a pair, k = K = 1), and carries k/K of
    that side's weight. Scores are measured from the pooled mean of the units' values
    (see ``_independent_parts``: a block holding a larger share of one side's calls of
    a unit than of the other's would otherwise carry a part of the scale's origin)."""
    n = paired.difference.n
    if not n:
        return []
    totals = {r.unit: (len(r.candidate_calls), len(r.baseline_calls)) for r in paired.rows}
    values = [v for r in paired.rows for v in (r.candidate, r.baseline) if v is not None]
    centre = sum(values) / len(values) if paired.metric.scored and values else 0.0
    parts: list[tuple[str, float, float]] = []
    for block in blocks:
        part = weight = 0.0
        for row in (r for p in block.paired for r in p.rows):
            if row.candidate is None or row.baseline is None or row.unit not in totals:
                continue
            k_c, k_b = totals[row.unit]
            # A side with no call (a missing pair member) has a fixed value of its own block.
            w_c = len(row.candidate_calls) / k_c if k_c else 1.0
            w_b = len(row.baseline_calls) / k_b if k_b else 1.0
            part += (row.candidate - centre) * w_c - (row.baseline - centre) * w_b
            weight += (w_c + w_b) / 2
        parts.append((block.block or "", part / n, weight / n))
    return parts


def _flag(pair: Pair, difference: Estimate, parts: list[tuple[str, float, float]], n_blocks: int) -> list[BlockFlag]:
    total = difference.estimate
    # Only a difference the interval shows can "come from" somewhere; noise has no source,
    # and a zero-width interval shows nothing.
    shown = difference.low < difference.high and (difference.low > 0 or difference.high < 0)
    if not parts or not shown or not np.isfinite(total) or abs(total) < 1e-12:
        return []
    # The parts must add up to the difference they divide (they do not when a unit has
    # calls left out, or its calls are not all in the registered blocks): a share of a
    # sum that is not the total would be a made-up number.
    if not np.isclose(sum(p for _, p, _ in parts), total, rtol=1e-9, atol=1e-12):
        return []
    # Neither may the weights: then no share sentence can say what an even spread is.
    if not np.isclose(sum(w for _, _, w in parts), 1.0, rtol=1e-9):
        return []
    block, part, weight = max(parts, key=lambda p: p[1] / total)
    if part / total > max(0.5, 2 * weight):
        return [BlockFlag(pair, block, part, total, n_blocks, weight)]
    return []
