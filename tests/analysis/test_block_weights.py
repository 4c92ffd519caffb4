"""A block's share of a difference is read against the block's own weight in the
estimate: with task means over unequal repetitions, block 1 (every task's first
repetition) carries far more than 1/blocks of the weight, so a share near that weight is
no sign of a time effect. Oracle: the weights and shares recomputed here by hand."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import CONTRACT
from reportgen.analysis.block_flags import _independent_parts
from test_designs import analysed, paired_rows

REPEATED = CONTRACT.replace('design = "independent"', 'design = "repeated"').replace(
    'primary_metric = "first_pass_rate"', 'primary_metric = "score"').replace(
    'blocks = ["1", "2"]', 'blocks = ["1", "2", "3", "4", "5"]')


def repeated_source(make_source, reps: list[int], gain):
    cells = [(t, r) for t, k in enumerate(reps, 1) for r in range(1, k + 1)]
    contract = REPEATED.replace("planned_calls = 4", f"planned_calls = {len(cells)}")
    rows = paired_rows([1.0] * len(cells), [1.0 + gain(t, r) for t, r in cells],
                       task_id=[f"t{t}" for t, _ in cells], repetition=[str(r) for _, r in cells],
                       block_id=[str(r) for _, r in cells])
    return make_source(rows, contract=contract)


def test_a_share_that_matches_the_blocks_weight_is_not_flagged(make_source):
    # The same gain in every repetition: no time effect. Block 1 carries mean(1/K) of
    # the task-mean weight (78% here) and contributes exactly that share.
    reps = [1, 1, 1, 2, 5, 1, 1, 2]
    noise = [0.0, 0.01, -0.01, 0.02, 0.0]
    analysis, _ = analysed(repeated_source(make_source, reps, lambda t, r: 1.0 + noise[(t + r) % 5]))
    assert analysis.paired.difference.low > 0
    weight = np.mean([1 / k for k in reps])
    assert weight == pytest.approx(0.775)
    assert analysis.block_flags == ()


def test_a_gain_in_a_light_block_is_flagged_with_the_blocks_own_weight(make_source):
    reps = [5] * 8 + [1, 1]
    analysis, _ = analysed(repeated_source(make_source, reps, lambda t, r: (5.0 + 0.1 * t) if r == 5 else 0.01 * t))
    assert analysis.paired.difference.low > 0
    [flag] = analysis.block_flags
    weight = np.mean([1 / k if k >= 5 else 0.0 for k in reps])  # block 5 holds 1/5 of 8 tasks' calls
    assert flag.block == "5" and flag.weight == pytest.approx(weight)
    assert f"carries {weight:.0%} of the estimate's weight" in flag.message
    assert "even spread would be 20% each" not in flag.message


SCORE_BLOCKS = CONTRACT.replace('primary_metric = "first_pass_rate"', 'primary_metric = "score"').replace(
    'blocks = ["1", "2"]', 'blocks = ["1", "2", "3"]').replace("planned_calls = 4", "planned_calls = 24")


def score_blocks_source(make_source, gain, offset=0.0, timeouts=(), blocks=None, contract=SCORE_BLOCKS):
    """Two independent samples of 24 scores, 8 calls of each service in each of 3 blocks
    (or the ``blocks`` of each call), every score ``offset`` up; Y's calls at
    ``timeouts`` time out (no score, and no failure_score registered)."""
    blocks = blocks or [i // 8 + 1 for i in range(24)]
    x = [offset + 0.5 + 0.01 * (i % 3) for i in range(24)]
    y = [None if i in timeouts else v + gain(blocks[i]) for v, i in zip(x, range(24))]
    rows = paired_rows(x, y, block_id=[str(b) for b in blocks])
    for row in rows:
        del row["pair_id"]  # independent samples
    return make_source(rows, contract=contract), x, y


def test_a_score_differences_block_parts_add_up_to_it_from_the_blocks_own_scores(make_source):
    source, _, _ = score_blocks_source(make_source, lambda block: 0.1 * block, 100.0, timeouts=range(4))
    analysis, _ = analysed(source)
    comparison = analysis.overall.comparisons[0]
    parts = _independent_parts(analysis.overall, analysis.blocks, comparison)
    assert [name for name, _, _ in parts] == ["1", "2", "3"]
    assert sum(p for _, p, _ in parts) == pytest.approx(comparison.difference.estimate, abs=1e-9)
    assert sum(w for _, _, w in parts) == pytest.approx(1.0)


def test_blocks_padded_past_the_whole_sample_give_no_parts(make_source):
    # 24 planned calls a service over 3 blocks (8 each), logged 10, 6 and 8: the whole
    # sample has every planned call, but block 2's share of the plan pads it with two
    # failure_score entries on each side, which the whole sample does not have.
    contract = SCORE_BLOCKS.replace("alpha = 0.05", "alpha = 0.05\nfailure_score = 0")
    source, _, _ = score_blocks_source(make_source, lambda block: 0.6 if block == 3 else 0.0,
                                       blocks=[1] * 10 + [2] * 6 + [3] * 8, contract=contract)
    analysis, _ = analysed(source)
    comparison = analysis.overall.comparisons[0]
    assert comparison.difference.low > 0
    block_2 = analysis.blocks[1].service("Y")
    assert len(block_2.compared_scores) == len(block_2.scored_calls) + 2  # the padding
    assert _independent_parts(analysis.overall, analysis.blocks, comparison) == []
    assert analysis.block_flags == ()


@pytest.mark.parametrize("offset", [0.0, 100.0])
def test_a_score_difference_from_one_block_is_flagged_with_its_share_measured_from_the_pooled_mean(make_source,
                                                                                                     offset):
    # All of the gain in block 3, and four of Y's block-1 calls time out: each block's
    # part is its sum of scores on each side, measured from the pooled mean, over that
    # side's count (oracle: the sums by hand).
    source, x, y = score_blocks_source(make_source, lambda block: 0.6 if block == 3 else 0.0, offset,
                                       timeouts=range(4))
    analysis, claims = analysed(source)
    scored_y = [v for v in y if v is not None]
    centre = np.mean(x + scored_y)
    [flag] = analysis.block_flags
    assert flag.block == "3"
    assert flag.contribution == pytest.approx(sum(v - centre for v in y[16:]) / 20
                                              - sum(v - centre for v in x[16:]) / 24, abs=1e-9)
    assert flag.weight == pytest.approx((8 / 20 + 8 / 24) / 2)
    assert flag.message in claims["mini.Y_vs_X.difference"].flags


@pytest.mark.parametrize("offset", [0.0, 1000.0])
def test_a_score_difference_from_one_block_is_flagged_with_its_share(make_source, offset):
    # Welch's difference of two mean scores, all of it from block 3: with as many scores
    # on each side in each block, each block's part is its sum of scores on each side
    # over that side's count (oracle: the sums by hand), wherever the scale starts.
    source, x, y = score_blocks_source(make_source, lambda block: 0.6 if block == 3 else 0.0, offset)
    analysis, claims = analysed(source)
    difference = analysis.overall.comparisons[0].difference
    assert difference.low > 0
    [flag] = analysis.block_flags
    third = slice(16, 24)
    assert flag.block == "3" and flag.weight == pytest.approx(1 / 3)
    assert flag.contribution == pytest.approx(sum(y[third]) / 24 - sum(x[third]) / 24, abs=1e-9)
    assert flag.overall == pytest.approx(np.mean(y) - np.mean(x), abs=1e-9)
    assert flag.message in claims["mini.Y_vs_X.difference"].flags


@pytest.mark.parametrize("offset", [0.0, 100.0, -1000.0])
def test_a_score_difference_spread_over_the_blocks_is_not_flagged_wherever_the_scale_starts(make_source, offset):
    # The same gain in every block, but four of Y's eight block-1 calls time out: block 1
    # holds fewer of Y's scores than of X's. Measured from zero, a score of 100 would
    # give block 2 "more than the whole difference"; from the pooled mean, each block's
    # part follows its share of the scores.
    source, x, y = score_blocks_source(make_source, lambda block: 0.2, offset, timeouts=range(4))
    analysis, _ = analysed(source)
    difference = analysis.overall.comparisons[0].difference
    assert difference.low > 0
    assert difference.estimate == pytest.approx(np.mean([v for v in y if v is not None]) - np.mean(x), abs=1e-9)
    assert analysis.block_flags == ()


@pytest.mark.parametrize("offset", [0.0, 100.0])
def test_task_means_over_blocks_split_unevenly_by_side_are_not_flagged_wherever_the_scale_starts(make_source, offset):
    # Every task gains about 0.2, in every repetition: no time effect. X ran each task four
    # times, two of them in block 1; Y three times, once in each block. Block 1 then holds
    # half of X's weight in a task and a third of Y's: measured from zero, scores near
    # 100 would give block 2 "more than the whole difference".
    def gain(t: int) -> float:
        return 0.2 + 0.02 * (t % 3)

    rows = []
    for t in range(1, 9):
        base = offset + 0.5 + 0.01 * t
        for r, (block_x, block_y) in enumerate([("1", "1"), ("1", "2"), ("2", "3"), ("3", None)], 1):
            for service, value, block in (("X", base, block_x), ("Y", base + gain(t), block_y)):
                if block is not None:
                    rows.append((service, value, f"t{t}", str(r), block))
    x = [v for s, v, *_ in rows if s == "X"]
    y = [v for s, v, *_ in rows if s == "Y"]
    made = paired_rows([v for s, v, *_ in rows], [0.0] * len(rows))[::2]  # one row per entry, as X
    for row, (service, value, task, rep, block) in zip(made, rows):
        row.update(service=service, call_id=f"{service}-{task}-{rep}", task_id=task, repetition=rep,
                   block_id=block, score=str(value), service_group="direct" if service == "X" else "relay")
        del row["pair_id"]
    contract = REPEATED.replace('blocks = ["1", "2", "3", "4", "5"]', 'blocks = ["1", "2", "3"]').replace(
        "planned_calls = 4", "planned_calls = 32")
    analysis, _ = analysed(make_source(made, contract=contract))
    difference = analysis.paired.difference
    assert 0 < difference.low < difference.high
    assert difference.estimate == pytest.approx(np.mean([gain(t) for t in range(1, 9)]), abs=1e-9)
    assert len(x) == 32 and len(y) == 24
    assert analysis.block_flags == ()
