"""A registered threshold's sign is never dropped: a negative min_useful_effect or
noninferiority_margin is refused at load (one line, file:line: field: message) and by
``stats.decide``; a positive one is read as a magnitude in the direction of better."""

from __future__ import annotations

import pytest

from conftest import CONTRACT
from reportgen import stats

RUN = "experiments/mini/run.toml"


def appended(line: str) -> str:
    return CONTRACT.replace("concurrency = 1\n", f"concurrency = 1\n{line}\n", 1)


@pytest.mark.parametrize("line, field", [
    ("min_useful_effect = -0.05", "run.min_useful_effect"),
    ("noninferiority_margin = -0.1", "run.noninferiority_margin"),
])
def test_a_negative_threshold_is_refused_at_load(make_source, run_cli, line, field):
    result = run_cli("check", make_source(contract=appended(line)))
    assert result.exit_code == 1, result.output
    value = line.split("= ")[1]
    expected = (f"{RUN}:15: error [invalid] {field}: must not be negative, got {value}: it is a magnitude in "
                f"the direction of better (run.higher_is_better says which way that is); write {value[1:]}")
    assert result.output.splitlines().count(expected) == 1, result.output
    assert "Traceback" not in result.output


def test_a_negative_score_threshold_is_refused_too(make_source, run_cli):
    contract = appended("min_useful_effect = -2").replace('primary_metric = "first_pass_rate"',
                                                           'primary_metric = "score"')
    result = run_cli("check", make_source(contract=contract))
    assert result.exit_code == 1 and "run.min_useful_effect: must not be negative, got -2" in result.output


def test_a_positive_threshold_is_accepted(make_source, run_cli):
    result = run_cli("check", make_source(contract=appended("min_useful_effect = 0.05")))
    assert "min_useful_effect" not in result.output, result.output


@pytest.mark.parametrize("kwargs", [{"min_useful_effect": -0.05}, {"noninferiority_margin": -0.1}])
def test_decide_refuses_a_negative_threshold_instead_of_flipping_it(kwargs):
    # Before: -0.05 was read as +0.05 and the interval [0.02, 0.3] was "improvement
    # shown, useful size not proven" against a threshold nobody registered.
    with pytest.raises(ValueError, match="must be >= 0"):
        stats.decide(0.02, 0.3, **kwargs)
