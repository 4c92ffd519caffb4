"""A corrected blind grade changes a call's outcome without changing its row: the diff
between two versions, and the build's page of changes, still name the call."""

from __future__ import annotations

import pytest

from test_grading_build import TRUTH, graded_source, write_grades


def _two_versions(make_source, run_cli, tmp_path, primary: str):
    source = graded_source(make_source, primary=primary)
    site = tmp_path / "site"
    assert run_cli("build", source, "--out", site, "-q").exit_code == 0
    corrected = dict(TRUTH, **{"Y-3": "pass"})  # both graders now pass Y-3 (it failed)
    write_grades(source, {"ana": corrected, "ben": dict(corrected, **{"X-2": "fail"})})
    (source / "reportgen.toml").write_text('title = "Mini report"\nversion = "v2"\nprevious = "v1"\n', "utf-8")
    result = run_cli("build", source, "--out", site, "-q")
    assert result.exit_code == 0, result.output
    return site


@pytest.mark.slow  # two builds of a small site
def test_a_corrected_blind_grade_is_a_changed_call(make_source, run_cli, tmp_path):
    site = _two_versions(make_source, run_cli, tmp_path, "human")
    result = run_cli("diff", site / "v1", site / "v2")
    assert result.exit_code == 0, result.output
    changed = result.output[result.output.index("Calls changed"):].split("\n\n")[0].splitlines()[1:]
    assert len(changed) == 1, result.output
    assert "mini/Y-3" in changed[0] and "outcome (blind grades)" in changed[0]
    assert "'complete, failed the task' -> 'complete, passed'" in changed[0]
    page = (site / "diff" / "v1..v2" / "index.html").read_text(encoding="utf-8")
    assert "outcome (blind grades)" in page and "Y-3" in page


@pytest.mark.slow
def test_grades_beside_logged_outcomes_change_no_call(make_source, run_cli, tmp_path):
    site = _two_versions(make_source, run_cli, tmp_path, "logged")
    result = run_cli("diff", site / "v1", site / "v2")
    assert result.exit_code == 0, result.output
    assert "outcome (blind grades)" not in result.output
