"""The sentence beside a p-value describes the test that was run: Fisher's test speaks of
splits of passes, Welch's of a difference of mean scores, McNemar's of discordant
pairs; an undefined p gets no probability sentence. Oracle: scipy's Welch test."""

from __future__ import annotations

import math

import pytest
from scipy.stats import ttest_ind

from conftest import CONTRACT, default_rows
from reportgen.render import present
from sitecheck import text

SCORE_CONTRACT = CONTRACT.replace('primary_metric = "first_pass_rate"', 'primary_metric = "score"')


def scored_rows(x_scores, y_scores):
    rows = default_rows()
    for row in rows:
        if row["status"] == "ok":
            scores = x_scores if row["service"] == "X" else y_scores
            row["score"] = str(scores[int(row["call_id"].split("-")[1]) - 1])
        else:
            row["score"] = ""
    return rows


@pytest.mark.parametrize("test, words", [
    ("fisher", "a split of passes at least this uneven"),
    ("welch", "a difference of mean scores at least this large"),
    ("paired-t", "a mean difference at least this large"),
    ("mcnemar", "a split of the discordant pairs at least this uneven"),
    ("sign-flip", "a total difference at least this far from zero"),
])
def test_each_test_has_its_own_sentence(test, words):
    reading = present.p_value_reading(0.33, 0.05, test)
    assert words in reading and "about 33.0%" in reading
    assert "probability that either service is better" in reading  # what p is not


@pytest.mark.parametrize("p", [math.nan, None])
def test_an_undefined_p_gets_no_probability_sentence(p):
    reading = present.p_value_reading(p, 0.05, "welch")
    assert "would occur" not in reading and "%" not in reading
    assert "no probability is stated" in reading


def test_a_score_comparison_page_describes_welch_not_fisher(make_source, run_cli, tmp_path):
    x, y = [1.0, 2.0, 4.0, 3.5], [2.0, 0.0, 5.0, 6.0]  # Y-2 timed out: no score
    source = make_source(scored_rows(x, y), contract=SCORE_CONTRACT)
    result = run_cli("build", source, "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    page = text(tmp_path / "site/v1/experiments/mini/index.html")
    p = ttest_ind([2.0, 5.0, 6.0], x, equal_var=False).pvalue
    assert ("a difference of mean scores at least this large, in either direction, would occur in about "
            f"{present.percent(p, 1)}") in page
    assert "split of passes" not in page


def test_an_undefined_welch_p_prints_no_probability(make_source, run_cli, tmp_path):
    source = make_source(scored_rows([2.0] * 4, [3.0] * 4), contract=SCORE_CONTRACT)
    result = run_cli("build", source, "--out", tmp_path / "site", "-q")
    assert result.exit_code == 0, result.output
    for page in ("experiments/mini/index.html", "index.html"):
        body = text(tmp_path / "site/v1" / page)
        assert "would occur in" not in body and "no probability is stated" in body
