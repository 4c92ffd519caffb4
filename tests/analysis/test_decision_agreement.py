"""Every decision agrees with the test printed beside it: a paired pass/fail comparison
whose t interval excludes zero while its exact McNemar test does not reject shows no
direction, and says why."""

from __future__ import annotations

import dataclasses

from scipy import stats as sps

from reportgen.analysis.paired import compare
from reportgen.analysis.results import PairRow
from reportgen.load.source import load_source


def rows(only_candidate: int, only_baseline: int, both_pass: int, both_fail: int) -> tuple[PairRow, ...]:
    cells = ([(0.0, 1.0)] * only_candidate + [(1.0, 0.0)] * only_baseline + [(1.0, 1.0)] * both_pass
             + [(0.0, 0.0)] * both_fail)
    return tuple(PairRow(f"seed-{i}", b, c, (f"A-{i}",), (f"B-{i}",), "1", "", "")
                 for i, (b, c) in enumerate(cells, 1))


def paired_contract(make_source):
    contract = load_source(make_source()).runs[0].contract
    return dataclasses.replace(contract, design="paired", min_useful_effect=None, noninferiority_margin=None)


def test_a_t_interval_past_zero_beside_a_mcnemar_test_that_does_not_reject_shows_no_direction(make_source):
    contract = paired_contract(make_source)
    result = compare(contract, rows(5, 0, 5, 10), "X", "Y")
    t = result.difference
    mcnemar = sps.binomtest(0, 5, 0.5).pvalue  # the oracle: 0.0625
    assert t.low > 0 and result.binary.mcnemar.p_value == mcnemar and mcnemar >= contract.alpha
    assert result.verdict.code == "no_difference_shown"
    assert "the exact McNemar test does not reject" in result.verdict.reason
    assert "p = 0.0625" in result.verdict.reason


def test_when_both_reject_the_direction_is_shown(make_source):
    contract = paired_contract(make_source)
    result = compare(contract, rows(7, 0, 5, 8), "X", "Y")
    assert sps.binomtest(0, 7, 0.5).pvalue < contract.alpha and result.difference.low > 0
    assert (result.verdict.code, result.verdict.label) == ("improvement_not_useful_size", "improvement shown")


def test_a_p_value_reads_as_a_phrase():
    from reportgen.render.present import p_is

    assert (p_is(0.00001), p_is(0.0625), p_is(0.99999)) == ("p < 0.0001", "p = 0.0625", "p > 0.9999")
