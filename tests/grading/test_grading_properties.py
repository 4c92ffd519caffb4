"""Any set of blind grades and judge grades builds without NaN or infinity: hypothesis
draws the graders (one to three), their grades, the judge's and the contract's rules;
the edge cases are named examples (no agreement, full agreement, a judge that is always
right, one that never passes, one grader)."""

from __future__ import annotations

import json
import math
import re
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import SourceFactory
from reportgen.analysis.run import analyze_run
from reportgen.claims.make import build_claims
from reportgen.cli import main
from reportgen.load.source import load_source
from test_grading_build import ITEMS, TRUTH, grading_table, rows_with_judge, write_grades

CALLS = sorted(ITEMS)
FLIP = {"pass": "fail", "fail": "pass", "disputed": "pass"}
grade = st.sampled_from(["pass", "fail", "disputed"])
grader_sets = st.lists(st.fixed_dictionaries({c: grade for c in CALLS}), min_size=1, max_size=3)
judges = st.fixed_dictionaries({c: st.sampled_from(["pass", "fail"]) for c in CALLS})
rules = st.tuples(st.sampled_from(["logged", "human"]), st.sampled_from(["majority", "disputed", "third-grader"]))

NO_AGREEMENT = [TRUTH, {c: FLIP[g] for c, g in TRUTH.items()}]
FULL_AGREEMENT = [TRUTH, TRUTH, TRUTH]
RIGHT_JUDGE = dict(TRUTH)
NEVER_PASSES = {c: "fail" for c in CALLS}
EDGES = [
    (NO_AGREEMENT, RIGHT_JUDGE, ("human", "majority")),
    (FULL_AGREEMENT, RIGHT_JUDGE, ("logged", "disputed")),
    ([TRUTH, TRUTH], NEVER_PASSES, ("logged", "third-grader")),
    ([TRUTH], RIGHT_JUDGE, ("human", "majority")),
    ([{c: "pass" for c in CALLS}, {c: "pass" for c in CALLS}], {c: "pass" for c in CALLS}, ("logged", "majority")),
]


def _source(root: Path, graders: list[dict[str, str]], judge: dict[str, str], rule: tuple[str, str]) -> Path:
    source = SourceFactory(root)(rows_with_judge(judge), contract=grading_table(*rule))
    return write_grades(source, {f"g{i}": grades for i, grades in enumerate(graders)})


def _finite(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _edge_examples(test):
    for graders, judge, rule in EDGES:
        test = example(graders, judge, rule)(test)
    return test


@_edge_examples
@given(grader_sets, judges, rules)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_grade_set_gives_finite_claims(graders, judge, rule):
    with tempfile.TemporaryDirectory() as tmp:
        run = load_source(_source(Path(tmp), graders, judge, rule)).runs[0]
        claims = [c.to_json() for c in build_claims(analyze_run(run))]
    text = json.dumps(claims, allow_nan=False)  # raises on NaN or infinity
    assert _finite(claims)
    ids = {c["id"] for c in claims}
    assert "mini.X.judge_corrected_pass_rate" in ids and ("mini.graders.grader_agreement" in ids) == (len(graders) > 1)
    for c in claims:
        if c["kind"] in ("agreement", "corrected_rate") and c["estimate"] is None:
            assert c["warnings"] and c["not_finite"]["estimate"] == "undefined"  # null, with its reason
    assert "nan" not in text.lower().replace("nanosecond", "")


@pytest.mark.slow
@pytest.mark.parametrize("graders,judge,rule", EDGES)
def test_edge_grade_sets_build_without_nan_on_any_page(graders, judge, rule, tmp_path):
    source = _source(tmp_path, graders, judge, rule)
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["build", str(source), "--out", str(out)])
    assert result.exit_code == 0, result.output
    for page in [*out.rglob("*.html"), *out.rglob("*.json")]:
        text = page.read_text("utf-8")
        assert not re.search(r"\b(nan|NaN|inf|Infinity)\b", text), page
    verified = CliRunner().invoke(main, ["verify", str(out / "v1")])
    assert verified.exit_code == 0, verified.output


@pytest.mark.slow
@given(grader_sets, judges, rules)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_drawn_grade_sets_build_without_nan_on_any_page(graders, judge, rule):
    with tempfile.TemporaryDirectory() as tmp:
        source = _source(Path(tmp), graders, judge, rule)
        out = Path(tmp) / "site"
        result = CliRunner().invoke(main, ["build", str(source), "--out", str(out)])
        assert result.exit_code == 0, result.output
        for page in [*out.rglob("*.html"), *out.rglob("*.json")]:
            assert not re.search(r"\b(nan|NaN|inf|Infinity)\b", page.read_text("utf-8")), page
