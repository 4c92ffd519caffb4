"""Infinite and undefined statistics never crash a build and never reach a page as nan
or inf: the page says what happened in words, results.json carries null and a reason."""

from __future__ import annotations

import json
import re

import pytest

from conftest import default_rows
from reportgen.render import present
from sitecheck import text

VISIBLE_NON_NUMBER = re.compile(r"(?<![\w/.-])(nan|NaN|inf|-inf|Infinity)(?![\w/.-])")


def with_outcome(rows, service, qualified):
    for row in rows:
        if row["service"] == service:
            row.update(status="ok", qualified=qualified, finish_reason="stop", failure_reason="")
    return rows


def non_numbers(site) -> list[str]:
    found = []
    for page in site.rglob("*.html"):
        visible = re.sub(r"<[^>]+>", " ", text(page))
        found += [f"{page.relative_to(site)}: {m.group(0)}" for m in VISIBLE_NON_NUMBER.finditer(visible)]
    return found


CASES = {
    # Y never fails: the odds ratio is infinite (the build used to stop on it).
    "candidate never fails": (with_outcome(default_rows(), "Y", "true"), "infinite",
                              "infinite: Y had no non-passes"),
    "both pass every call": (with_outcome(with_outcome(default_rows(), "Y", "true"), "X", "true"), "undefined",
                             "not defined: Y and X passed every call"),
    "neither passes": (with_outcome(with_outcome(default_rows(), "Y", "false"), "X", "false"), "undefined",
                       "not defined: neither Y nor X passed any call"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_degenerate_odds_ratio_is_said_in_words(case, make_source, run_cli, tmp_path):
    rows, reason, words = CASES[case]
    out = tmp_path / "site"
    result = run_cli("build", make_source(rows), "--out", out, "-q")
    assert result.exit_code == 0, result.output
    site = out / "v1"
    assert non_numbers(site) == []
    assert f"(odds ratio Y vs X: {words})" in text(site / "experiments/mini/index.html")
    assert f"statistic: odds ratio {words}." in text(site / "claims/mini.html")
    fisher = next(c for c in json.loads(text(site / "data/results.json"))["claims"] if c["id"] == "mini.Y_vs_X.fisher")
    assert fisher["estimate"] is None
    assert fisher["not_finite"] == {"estimate": reason} and fisher["statistic_note"] == words
    assert run_cli("verify", site).exit_code == 0


def test_a_tiny_p_value_reads_as_less_than():
    assert "occur in less than 0.1% of runs" in present.p_value_reading(0.00001, 0.05)
    assert "occur in about 2.2% of runs" in present.p_value_reading(0.0224774, 0.05)


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), None])
def test_no_number_formatter_prints_a_non_number(value):
    for shown in (present.percent(value), present.points(value), present.p_value(value), present.score(value),
                  present.milliseconds(value)):
        assert shown == "undefined"
