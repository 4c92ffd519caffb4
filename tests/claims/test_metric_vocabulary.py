"""The typed vocabularies: the primary metric as an object (the names of its interval and
test, and how its numbers print), claim measures and units as StrEnums, and the formats
chosen by the interval's method rather than by the spelling of its name."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from reportgen import stats
from reportgen.analysis.results import ComparisonResult
from reportgen.model.claim_keys import ClaimKey
from reportgen.model.measures import Measure, Unit
from reportgen.model.metric import PASS_FAIL, SCORE, PrimaryMetric
from reportgen.render import present
from reportgen.render.views import RunView
from test_designs import analysed
from test_score_independent import contract as score_contract
from test_score_independent import score_rows

TEMPLATES = Path(__file__).resolve().parents[2] / "themes" / "default" / "templates"


def test_one_object_names_the_interval_and_the_test_of_each_metric():
    assert (PASS_FAIL.name, PASS_FAIL.interval_short, PASS_FAIL.test_family, PASS_FAIL.test_key) == (
        "first_pass_rate", "Newcombe", "Fisher", "fisher")
    assert (SCORE.name, SCORE.interval_short, SCORE.test_family, SCORE.test_key) == (
        "score", "Welch", "Welch", "welch")
    assert PASS_FAIL.test_name == "Fisher's exact test" and SCORE.test_name == "Welch's t test"
    assert (PASS_FAIL.unit, SCORE.unit) == (Unit.RATE, Unit.SCORE)
    assert (PASS_FAIL.value_key, SCORE.value_key) == (Measure.FIRST_PASS_RATE, Measure.MEAN_SCORE)
    assert PrimaryMetric(True, higher_is_better=False) != SCORE  # the direction is part of the metric


def test_a_pass_fail_run_names_its_claims_by_the_metric(make_source):
    analysis, claims = analysed(make_source())
    assert analysis.run.contract.metric == PASS_FAIL
    comparison = analysis.overall.comparisons[0]
    assert isinstance(comparison, ComparisonResult) and comparison.metric == PASS_FAIL
    assert comparison.test.method == "fisher-exact" and not hasattr(comparison, "fisher")
    test = claims["mini.Y_vs_X.fisher"]
    assert test.statement == "Fisher exact test, two-sided, of Y vs X pass / non-pass counts"
    assert claims["mini.Y_vs_X.difference"].statement == "First-submission pass rate of Y minus X"
    assert "mini.Y_vs_X.welch" not in claims


def test_a_score_run_names_welch_for_its_interval_its_test_and_its_holm_adjustment(make_source):
    services = ["X", "Y", "Z"]
    analysis, claims = analysed(make_source(score_rows(services), contract=score_contract("leaderboard", services)))
    metric = analysis.run.contract.metric
    assert metric.scored and metric.higher_is_better
    comparison = analysis.overall.comparisons[0]
    assert comparison.metric == metric and comparison.test.method == "welch-t"
    assert comparison.test_measure == Measure.WELCH
    assert claims["mini.Y_vs_X.welch"].statement == "Welch t test, two-sided, of Y vs X scores"
    assert claims["mini.Y_vs_X.difference"].statement == (
        "Mean score of Y minus X (independent samples, Welch interval)")
    assert "Bonferroni-adjusted Welch interval" in comparison.verdict.basis
    assert all(r.metric == metric for r in analysis.ranks)
    assert "pairwise Welch intervals" in claims["mini.X.rank"].statement


def test_every_claim_is_keyed_by_a_measure_and_typed_by_a_unit(make_source):
    _, claims = analysed(make_source())
    for claim in claims.values():
        assert type(claim.key.measure) is Measure, claim.id
        assert claim.unit is None or type(claim.unit) is Unit, claim.id
    # results.json keeps the plain words
    record = json.loads(json.dumps(claims["mini.Y.first_pass_rate"].to_json()))
    assert record["unit"] == "rate" and record["id"] == "mini.Y.first_pass_rate"


def test_a_measure_and_the_same_word_as_a_string_make_the_same_key():
    typed = ClaimKey("run", "X", Measure.PASS_WITHIN_ATTEMPTS, detail="3")
    spelled = ClaimKey("run", "X", "pass_within_attempts", detail="3")  # type: ignore[arg-type]
    assert typed == spelled and hash(typed) == hash(spelled)
    assert typed.id == "run.X.pass_within_3_attempts"
    assert ClaimKey("run", "X", Measure.CHANGE_FISHER).id == "run.X.change.fisher"


def test_a_template_asking_for_a_measure_no_claim_can_have_is_an_error_not_a_missing_claim():
    claim = object()
    view = SimpleNamespace(id="run", claims={ClaimKey("run", "X", Measure.FIRST_PASS_RATE): claim})
    assert RunView.claim(view, "X", Measure.FIRST_PASS_RATE) is claim  # type: ignore[arg-type]
    assert RunView.claim(view, "X", "first_pass_rate") is claim  # type: ignore[arg-type]
    assert RunView.claim(view, "X", Measure.MEAN_SCORE) is None  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RunView.claim(view, "X", "first_pas_rate")  # type: ignore[arg-type]


def test_every_measure_a_template_names_exists_and_no_template_spells_one_as_a_string():
    named = set()
    for page in TEMPLATES.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        named |= set(re.findall(r"\bMeasure\.([A-Za-z0-9_]+)", text))
        assert not re.search(r"run\.claim\((?:\([^()]*\)|[^,()])+, '", text), page.name
        assert not re.search(r"metric [=!]= '", text), page.name
    assert named and named <= set(Measure.__members__)


def test_paired_methods_are_those_the_paired_analyses_produce():
    b, a = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0, 0.0, 1.0]
    paired = [stats.paired_t(b, a), stats.paired_bootstrap(b, a, resamples=200, seed=1),
              stats.cluster_bootstrap([1.0, -1.0, 0.5, 0.0], ["c1", "c1", "c2", "c3"], resamples=200, seed=1),
              stats.hierarchical_bootstrap(b, a, ["t1", "t1", "t2", "t2", "t3", "t3"], resamples=200, seed=1)]
    independent = [stats.wilson(3, 6), stats.newcombe_difference(3, 6, 2, 6), stats.welch_difference(b, a).difference]
    assert {e.method for e in paired} == stats.PAIRED_METHODS
    assert not {e.method for e in independent} & stats.PAIRED_METHODS


def _shown(kind: str, unit: str | None, estimate: float, low: float, high: float, method: str) -> SimpleNamespace:
    return SimpleNamespace(kind=kind, unit=unit, estimate=estimate, low=low, high=high, method=method,
                           numerator=None, denominator=None, confidence_level=0.95, p_value=None,
                           adjusted_p_value=None, adjustment=None, verdict="x", verdict_label="x", group=None,
                           decision_basis=None)


def test_a_decision_read_on_a_paired_interval_prints_two_decimals_and_an_independent_one_one():
    # A published record read back carries only the method's name: the format follows it.
    for method in stats.PAIRED_METHODS:
        assert present.interval(_shown("decision", "rate", 0.1, -0.01234, 0.25, method)) == "[−1.23, +25.00]"
    assert present.interval(_shown("decision", "rate", 0.1, -0.01234, 0.25, "newcombe-hybrid-score")) == "[−1.2, +25.0]"
    # a method that merely starts like a paired one is not one
    assert present.interval(_shown("decision", "rate", 0.1, -0.01234, 0.25, "paired-ish")) == "[−1.2, +25.0]"


def test_the_metric_formats_a_difference_as_the_claims_show_it():
    assert present.value(_shown("difference", "rate", 0.125, 0, 0.2, "newcombe-hybrid-score")) == \
        PASS_FAIL.difference_text(0.125) == "+12.5 points"
    assert present.value(_shown("difference", "score", 0.25, 0, 0.5, "welch-t")) == \
        SCORE.difference_text(0.25) == "+0.25"
    assert present.interval(_shown("difference", "score", 0.25, -0.125, 0.5, "welch-t")) == \
        SCORE.interval_text(-0.125, 0.5) == "[−0.125, +0.5]"
    assert present.value(_shown("paired_difference", "rate", 0.125, 0, 0.2, "paired-t")) == "+12.50 points"
    assert PASS_FAIL.threshold_text(-0.05) == "5 points" and SCORE.threshold_text(0.5) == "0.5 (score units)"
