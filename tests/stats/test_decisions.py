"""Decisions agree with the interval, the test and the multiplicity correction printed
beside them, are written in the contract's direction, and are never read from an
interval that cannot be computed."""

from __future__ import annotations

import json

import pytest
from scipy.stats import fisher_exact as scipy_fisher
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep

from conftest import CONTRACT, default_rows
from reportgen import stats
from sitecheck import text


@pytest.mark.parametrize("low, high", [(0.5, 0.5), (float("nan"), float("nan")), (-0.2, float("nan"))])
def test_no_decision_is_read_from_an_interval_that_says_nothing(low, high):
    verdict = stats.decide(low, high, min_useful_effect=0.3, noninferiority_margin=0.1)
    assert verdict.code == "not_decidable" and verdict.label == "not decidable"
    assert "contains zero" not in verdict.reason and verdict.noninferior is None


def test_a_direction_needs_the_printed_test_to_reject():
    # 16/20 against 10/20: Newcombe excludes zero, Fisher's exact test does not reject.
    compared = stats.compare_rates(16, 20, 10, 20)
    assert compared.difference.low > 0
    assert compared.test.p_value == pytest.approx(scipy_fisher([[16, 4], [10, 10]]).pvalue, rel=1e-9)
    test = stats.Test(compared.test.p_value, 0.05, "Fisher's exact test")
    verdict = stats.decide(compared.difference.low, compared.difference.high, test=test)
    assert verdict.code == "no_difference_shown"
    assert "the interval excludes zero, but Fisher's exact test does not reject at α = 0.05 (p = 0.0958)" in \
        verdict.reason
    # Without the test beside it, the interval alone would have said improvement.
    assert stats.decide(compared.difference.low, compared.difference.high).code == "improvement_not_useful_size"


def test_when_the_test_rejects_but_the_interval_contains_zero_the_page_says_so():
    verdict = stats.decide(-0.01, 0.4, test=stats.Test(0.03, 0.05, "Fisher's exact test"))
    assert verdict.code == "no_difference_shown"
    assert "although Fisher's exact test rejects at α = 0.05 (p = 0.0300)" in verdict.reason


@pytest.mark.parametrize("low, high, code, words", [
    (-1.56, -0.705, "useful_improvement", "lower is better, and the whole interval lies below minus the minimum"),
    (-0.4, -0.1, "improvement_not_useful_size", "lies below zero but reaches above minus the minimum useful"),
    (0.2, 0.9, "candidate_worse", "lower is better, and the whole interval lies above zero"),
    (-0.2, 0.3, "no_difference_shown", "the interval contains zero"),
])
def test_lower_is_better_is_read_and_written_the_right_way(low, high, code, words):
    verdict = stats.decide(low, high, min_useful_effect=0.5, noninferiority_margin=0.25, higher_is_better=False)
    assert verdict.code == code and words in verdict.reason
    assert "above the minimum useful effect" not in verdict.reason
    assert ("upper end lies below the margin" in verdict.noninferiority_text) == (high < 0.25)


def test_leaderboard_decisions_follow_the_holm_adjusted_test(demo_site):
    claims = {c["id"]: c for c in json.loads(text(demo_site / "data/results.json"))["claims"]}
    fisher = {cid: c for cid, c in claims.items()
              if cid.startswith("relay-leaderboard.") and cid.endswith(".fisher") and ".block-" not in cid}
    ids = sorted(fisher)
    # Oracle: statsmodels' Holm step-down over the same raw p-values.
    expected = multipletests([fisher[i]["p_value"] for i in ids], alpha=0.05, method="holm")[1]
    for cid, adjusted in zip(ids, expected):
        assert fisher[cid]["adjusted_p_value"] == pytest.approx(adjusted, rel=1e-12)
        verdict = claims[cid.removesuffix(".fisher") + ".verdict"]
        if adjusted >= 0.05:
            assert verdict["verdict"] in ("no_difference_shown", "blocked_by_critical", "not_decidable"), cid
        if verdict["verdict"] in ("useful_improvement", "improvement_not_useful_size", "candidate_worse"):
            assert adjusted < 0.05 and (verdict["interval"]["low"] > 0 or verdict["interval"]["high"] < 0)
    # relay-04: its 95% Newcombe interval excludes zero, but with five comparisons the
    # decision reads the 99% (Bonferroni) interval, which does not, and Holm's p is 0.34.
    relay_04 = claims["relay-leaderboard.relay-04_vs_relay-01.verdict"]
    difference = claims["relay-leaderboard.relay-04_vs_relay-01.difference"]
    assert difference["interval"]["low"] > 0
    assert relay_04["verdict"] == "no_difference_shown"
    assert relay_04["interval"]["confidence_level"] == pytest.approx(0.99)
    assert relay_04["interval"]["low"] < 0 < relay_04["interval"]["high"]
    rates = {s: claims[f"relay-leaderboard.{s}.first_pass_rate"] for s in ("relay-04", "relay-01")}
    low, high = confint_proportions_2indep(
        rates["relay-04"]["numerator"], rates["relay-04"]["denominator"], rates["relay-01"]["numerator"],
        rates["relay-01"]["denominator"], method="newcomb", compare="diff", alpha=0.01)
    assert (relay_04["interval"]["low"], relay_04["interval"]["high"]) == pytest.approx((low, high), abs=1e-9)
    assert "read on the 99% interval (Bonferroni-adjusted" in relay_04["statement"]


def test_an_independent_run_lower_is_better_is_oriented(make_source, run_cli, tmp_path):
    # Y passes none of 4, X all 4: Y - X = -100 points, which is better when lower is.
    rows = default_rows()
    for row in rows:
        row.update(status="ok", qualified="true" if row["service"] == "X" else "false", finish_reason="stop",
                   failure_reason="")
    contract = CONTRACT.replace("alpha = 0.05", "alpha = 0.05\nhigher_is_better = false")
    out = tmp_path / "site"
    assert run_cli("build", make_source(rows, contract=contract), "--out", out, "-q").exit_code == 0
    claims = {c["id"]: c for c in json.loads(text(out / "v1/data/results.json"))["claims"]}
    verdict = claims["mini.Y_vs_X.verdict"]
    assert claims["mini.Y_vs_X.fisher"]["p_value"] == pytest.approx(scipy_fisher([[0, 4], [4, 0]]).pvalue)
    assert verdict["verdict"] == "improvement_not_useful_size" and verdict["verdict_label"] == "improvement shown"
    assert verdict["verdict_text"].startswith("lower is better, and the whole interval lies below zero")
    assert verdict["interval"]["high"] < 0
