"""A score compared between independent samples (independent and leaderboard designs):
the difference of means with Welch's interval and the Welch test it inverts, Holm across
a leaderboard's comparisons, ranks by mean score in the contract's direction."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from conftest import CONTRACT, REQUEST, request_hash
from reportgen import stats
from reportgen.stats.warnings import ALL_TIES_WELCH, FEW_SCORES
from sitecheck import broken_links, text

SCORES = {"X": [0.61, 0.72, 0.55, 0.80, 0.66, 0.70],
          "Y": [0.81, 0.92, 0.77, None, 0.88, 0.95],  # one timeout: no score
          "Z": [0.40, 0.45, 0.52, 0.38, 0.47, 0.50],
          "W": [0.64, 0.70, 0.58, 0.75, 0.69, 0.71]}
SERVICE = '\n[[service]]\nid = "{0}"\ngroup = "relay"\nrequested_model = "m-1"\n'


def score_rows(services: list[str]) -> list[dict[str, str]]:
    rows = []
    for i in range(6):
        for service in services:
            score = SCORES[service][i]
            call_id = f"{service}-{i + 1}"
            row = {"run_id": "mini", "block_id": "1" if i < 3 else "2", "service": service,
                   "service_group": "relay", "requested_model": "m-1", "returned_model": "m-1",
                   "started_at": f"2026-10-01T09:{10 * i + services.index(service):02d}:00+00:00",
                   "request_hash": request_hash(REQUEST), "status": "ok", "finish_reason": "stop",
                   "latency_ms": "900", "qualified": "true", "failure_reason": "", "artifact_path": "",
                   "call_id": call_id, "grade_reason": "graded", "score": "" if score is None else str(score)}
            if score is None:
                row.update(status="timeout", finish_reason="", qualified="", failure_reason="timeout")
            rows.append(row)
    return rows


def contract(design: str, services: list[str], **replace: str) -> str:
    text_ = CONTRACT.replace('design = "independent"', f'design = "{design}"').replace(
        'primary_metric = "first_pass_rate"', 'primary_metric = "score"').replace("planned_calls = 4", "planned_calls = 6")
    text_ = text_.replace('candidates = ["Y"]', f"candidates = {json.dumps(services[1:])}").replace(
        "in first-submission pass rate?", "in mean score?")
    for old, new in replace.items():
        text_ = text_.replace(old, new)
    return text_ + "".join(SERVICE.format(s) for s in services[2:])


def build(make_source, run_cli, tmp_path, design, services, **replace):
    source = make_source(score_rows(services), contract=contract(design, services, **replace))
    result = run_cli("build", source, "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    site = tmp_path / "site" / "v1"
    assert run_cli("verify", site).exit_code == 0
    assert broken_links(site) == []
    return site, {c["id"]: c for c in json.loads(text(site / "data" / "results.json"))["claims"]}


def observed(service: str) -> list[float]:
    return [s for s in SCORES[service] if s is not None]


def test_two_independent_services_are_compared_by_welch(make_source, run_cli, tmp_path):
    site, claims = build(make_source, run_cli, tmp_path, "independent", ["X", "Y"],
                         **{"alpha = 0.05": "alpha = 0.05\nmin_useful_effect = 0.05"})
    oracle = sps.ttest_ind(observed("Y"), observed("X"), equal_var=False)
    low, high = oracle.confidence_interval(0.95)
    diff = claims["mini.Y_vs_X.difference"]
    assert diff["estimate"] == pytest.approx(np.mean(observed("Y")) - np.mean(observed("X")), abs=1e-12)
    assert diff["interval"]["low"] == pytest.approx(low, abs=1e-9)
    assert diff["interval"]["high"] == pytest.approx(high, abs=1e-9)
    assert diff["interval"]["method"] == "welch-t"
    test = claims["mini.Y_vs_X.welch"]
    assert test["p_value"] == pytest.approx(oracle.pvalue, abs=1e-9)
    assert "mini.Y_vs_X.fisher" not in claims
    verdict = claims["mini.Y_vs_X.verdict"]
    assert oracle.pvalue < 0.05 and low > 0.05
    assert verdict["verdict"] == "useful_improvement"
    page = text(site / "experiments" / "mini" / "index.html")
    assert "Welch t test, two-sided" in page and "Welch t interval" in page
    assert "Fisher" not in page and "Newcombe" not in page and "pass rate" not in page.lower()
    assert "0.05 (score units)" in page  # the rule in the score's units, not in points
    assert "left out of the means" in page  # Y's timeout has no score, and the page says what that means


def test_a_score_run_claims_completions_and_scores_never_passes(make_source, run_cli, tmp_path):
    # The log's qualified is "true" for every complete return of a score run (its
    # evaluation completed): counting those as passes would publish "passed 6 of 6".
    site, claims = build(make_source, run_cli, tmp_path, "independent", ["X", "Y"])
    assert not [i for i in claims if i.endswith((".first_pass_rate", ".complete_pass_rate"))]
    assert not [c["statement"] for c in claims.values() if " passed " in c["statement"]]
    y = claims["mini.Y.completed"]  # one timeout among six planned: five complete returns
    assert (y["numerator"], y["denominator"]) == (5, 6)
    assert y["statement"] == "Y returned a complete answer to 5 of 6 planned first submissions"
    assert "the completion probability is stable over the observation window" in y["assumptions"]
    assert not [a for c in claims.values() for a in c["assumptions"] if "pass probability" in a]
    assert claims["mini.block-2.Y.mean_score"]["estimate"] == pytest.approx(np.mean([s for s in SCORES["Y"][3:] if s is not None]))
    claims_page = text(site / "claims" / "mini.html")
    assert "first_pass_rate" not in claims_page and " passed " not in claims_page
    # Nor does any call's line: each complete return is "scored", the timeout a failure.
    pages = [text(page) for page in site.rglob("*.html")]
    assert not [page for page in pages if "complete, passed" in page or "complete, failed" in page]
    sheets = "".join(text(page) for page in (site.parent / "store").glob("*.html"))
    assert sheets.count('<span class="outcome scored">complete, scored</span>') == 11
    assert sheets.count('<span class="outcome technical_failure">technical failure: timed out</span>') == 1
    assert sheets.count("<dt>Grade</dt><dd>score ") == 11  # the score as logged, not a pass
    assert "<dt>Grade</dt><dd>pass" not in sheets and "<dt>Grade</dt><dd>fail" not in sheets


@pytest.mark.parametrize("failure_score, counts_as", [
    (None, "counts as not complete and has no score (no failure_score is registered)"),
    ("0.25", "counts as not complete and scores 0.25 (the registered failure_score)")])
def test_a_score_runs_missing_calls_and_later_attempts_are_not_passes(make_source, run_cli, tmp_path,
                                                                       failure_score, counts_as):
    rows = [dict(r, attempt="1") for r in score_rows(["X", "Y"])]
    retry = dict(next(r for r in rows if r["call_id"] == "Y-4"), call_id="Y-4-r", attempt="2", status="ok",
                 finish_reason="stop", qualified="true", failure_reason="", score="0.9",
                 started_at="2026-10-01T09:59:00+00:00")
    rule = f"\nfailure_score = {failure_score}" if failure_score else ""
    source = make_source(rows + [retry], contract=contract("independent", ["X", "Y"]).replace(
        "planned_calls = 6", "planned_calls = 7").replace("alpha = 0.05", "alpha = 0.05" + rule))
    assert run_cli("build", source, "--out", tmp_path / "site", "-q").exit_code == 0
    site = tmp_path / "site" / "v1"
    claims = {c["id"]: c for c in json.loads(text(site / "data" / "results.json"))["claims"]}
    # One planned call of each service is missing from the log: not complete, not a non-pass.
    assert claims["mini.Y.missing_calls"]["statement"] == (
        "Y: 1 planned first submission has no row in the log and counts as not complete")
    assert f"the 1 missing {counts_as} (dropped failures" in text(site / "experiments" / "mini" / "audit.html")
    # A later attempt of a score run is not analysed as a pass within K attempts.
    assert not [i for i in claims if "within_attempts" in i]
    page = text(site / "experiments" / "mini" / "index.html")
    assert "Later attempts" not in page and "non-pass" not in page


def test_a_registered_failure_score_counts_every_call_without_a_score(make_source, run_cli, tmp_path):
    _, claims = build(make_source, run_cli, tmp_path, "independent", ["X", "Y"],
                      **{"alpha = 0.05": "alpha = 0.05\nfailure_score = 0"})
    y = [0.0 if s is None else s for s in SCORES["Y"]]
    oracle = sps.ttest_ind(y, observed("X"), equal_var=False)
    assert claims["mini.Y_vs_X.difference"]["estimate"] == pytest.approx(np.mean(y) - np.mean(observed("X")))
    assert claims["mini.Y_vs_X.welch"]["p_value"] == pytest.approx(oracle.pvalue, abs=1e-9)
    # The mean shown per service stays the mean of the scores returned.
    assert claims["mini.Y.mean_score"]["estimate"] == pytest.approx(np.mean(observed("Y")))


def test_a_score_leaderboard_adjusts_ranks_and_decides_in_the_contracts_direction(make_source, run_cli, tmp_path):
    services = ["X", "Y", "Z", "W"]
    site, claims = build(make_source, run_cli, tmp_path, "leaderboard", services,
                         **{"alpha = 0.05": "alpha = 0.05\nhigher_is_better = false\n"
                                            "bootstrap = {resamples = 2000, seed = 7}"})
    raw = [sps.ttest_ind(observed(s), observed("X"), equal_var=False).pvalue for s in services[1:]]
    holm = multipletests(raw, method="holm")[1]
    for service, p, adjusted in zip(services[1:], raw, holm):
        test = claims[f"mini.{service}_vs_X.welch"]
        assert test["p_value"] == pytest.approx(p, abs=1e-9)
        assert test["adjusted_p_value"] == pytest.approx(adjusted, abs=1e-9)
        verdict = claims[f"mini.{service}_vs_X.verdict"]
        level = 1 - 0.05 / 3
        low, high = sps.ttest_ind(observed(service), observed("X"), equal_var=False).confidence_interval(level)
        assert verdict["interval"]["low"] == pytest.approx(low, abs=1e-9)
        assert verdict["interval"]["confidence_level"] == pytest.approx(level)
        code = verdict["verdict"]
        if adjusted >= 0.05:
            assert code in ("no_difference_shown", "not_decidable")
        elif high < 0:  # lower is better: a lower mean is an improvement
            assert code in ("useful_improvement", "improvement_not_useful_size")
        elif low > 0:
            assert code == "candidate_worse"
    codes = {claims[f"mini.{s}_vs_X.verdict"]["verdict"] for s in services[1:]}
    assert "candidate_worse" in codes and codes & {"useful_improvement", "improvement_not_useful_size"}
    # Lower is better: Z (lowest mean) ranks first, Y (highest) last.
    ranks = {s: claims[f"mini.{s}.rank"]["estimate"] for s in services}
    assert ranks["Z"] == 1 and ranks["Y"] == 4
    page = text(site / "experiments" / "mini" / "index.html")
    assert "Services by mean score (lower is better: rank 1 is the lowest)" in page
    assert "Welch p, Holm-adjusted" in page and "Fisher" not in page


def test_a_score_is_refused_in_a_longitudinal_run_at_its_contract_line(make_source, run_cli, tmp_path):
    source = make_source(score_rows(["X", "Y"]), contract=contract("longitudinal", ["X", "Y"]))
    result = run_cli("build", source, "--out", tmp_path / "site")
    assert result.exit_code == 1
    assert "run.toml:8: run.primary_metric: a numeric score is not analysed in the longitudinal design" in result.output


def test_welch_degenerate_samples_give_no_interval_and_no_test():
    few = stats.welch_difference([1.0], [0.5, 0.7])
    assert math.isnan(few.difference.low) and FEW_SCORES in few.difference.warnings
    assert math.isnan(few.test.p_value)
    ties = stats.welch_difference([0.7, 0.7, 0.7], [0.2, 0.2])
    assert ties.difference.low == ties.difference.high == pytest.approx(0.5)
    assert ALL_TIES_WELCH in ties.difference.warnings
    verdict = stats.decide(ties.difference.low, ties.difference.high)
    assert verdict.code == "not_decidable"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(-100, 100), min_size=2, max_size=30), st.lists(st.floats(-100, 100), min_size=2, max_size=30),
       st.sampled_from([0.8, 0.9, 0.95, 0.99]))
# A spread so small that its square underflows: the textbook df formula divided by zero.
@example(b=[0.0, 0.0], a=[0.0, 5.027422754993822e-125], level=0.8)
# One sample of equal values: only the other's spread counts (df = its n - 1).
@example(b=[0.0, 1.0], a=[1.0, 1.0], level=0.8)
# A spread whose variance's square underflows in SciPy's formula, though ours does not.
@example(b=[0.0, 0.0], a=[0.0, 0.0, 8.218009412889157e-153], level=0.8)
# A spread whose variance is subnormal: worked out as it stands, p was 0.505 for 0.5.
@example(b=[0.0, 0.0], a=[0.0, 9.78120260996695e-162], level=0.8)
# A subnormal score: scaled up by a power of two it is exact (2.0 ** 1032 would overflow).
@example(b=[0.0, 0.0], a=[0.0, 2.225073858507e-311], level=0.8)
def test_welch_agrees_with_scipy_and_its_interval_inverts_its_test(b, a, level):
    result = stats.welch_difference(b, a, level)
    if not result.difference.warnings:
        with warnings.catch_warnings():
            # SciPy flags a sample of equal values ('precision loss ... nearly identical')
            # though its variance is exactly zero; a real loss would fail the comparisons.
            warnings.filterwarnings("ignore", "Precision loss", RuntimeWarning)
            # Asked of the scores scaled up by a power of two (exact, and the test is scale
            # free) when they are small: SciPy's df formula squares the variances, and
            # those of a tiny spread underflow to zero (b=[0, 0], a=[0, 0, 8e-153]).
            scale = max(abs(x) for x in (*b, *a))
            shift = -math.frexp(scale)[1] if 0 < scale < 1 else 0
            oracle = sps.ttest_ind([math.ldexp(x, shift) for x in b], [math.ldexp(x, shift) for x in a],
                                   equal_var=False)
        low, high = (math.ldexp(bound, -shift) for bound in oracle.confidence_interval(level))
        assert result.test.p_value == pytest.approx(oracle.pvalue, abs=1e-9)
        assert result.difference.low == pytest.approx(low, rel=1e-9, abs=1e-9)
        assert result.difference.high == pytest.approx(high, rel=1e-9, abs=1e-9)
        excludes_zero = result.difference.low > 0 or result.difference.high < 0
        if abs(result.test.p_value - (1 - level)) > 1e-9:
            assert excludes_zero == (result.test.p_value < 1 - level)
