"""Blind grades and an automated judge in the build: bad input as one line each, the
joining of grades (primary = "human"), the claims on the page and in results.json, and
verify recomputing them."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from pathlib import Path

import pytest

from conftest import CONTRACT, default_rows
from reportgen.load.source import load_source
from reportgen.load.grades import resolve
from reportgen.model.grading import GradeRow
from reportgen.model.config import parse_timestamp

GRADED_CONTRACT = CONTRACT.replace('render_viewport = "40x30"', 'render_viewport = "40x30"\ngrading_rule_version = "1"')
ITEMS = {"X-1": "a00000000001", "X-2": "a00000000002", "X-3": "a00000000003", "X-4": "a00000000004",
         "Y-1": "b00000000001", "Y-3": "b00000000003", "Y-4": "b00000000004"}


def grading_table(primary: str = "logged", review: str = "disputed", judge: bool = True) -> str:
    lines = ["", "[grading]", f'primary = "{primary}"', f'review = "{review}"']
    if judge:
        lines.append('judge_column = "judge_grade"')
    return GRADED_CONTRACT + "\n".join(lines) + "\n"


def rows_with_judge(judge: dict[str, str] | None = None) -> list[dict[str, str]]:
    rows = default_rows()
    for row in rows:
        logged = {"true": "pass", "false": "fail"}.get(row["qualified"], "")
        row["judge_grade"] = logged if judge is None else judge.get(row["call_id"], logged)
    return rows


def grades_csv(grades: dict[str, str], version: str = "1", at: str = "2026-10-02T10:00:00+00:00",
               extra_rows: list[tuple[str, ...]] = ()) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("item", "grade", "reason", "graded_at", "rule_version"))
    for call_id, grade in grades.items():
        writer.writerow((ITEMS[call_id], grade, f"looked at it, {grade}", at, version))
    writer.writerows(extra_rows)
    return buffer.getvalue()


def write_grades(source: Path, graders: dict[str, dict[str, str]], key: dict[str, str] | None = None,
                 **csv_options) -> Path:
    folder = source / "experiments" / "mini" / "grades"
    folder.mkdir(exist_ok=True)
    key = ITEMS if key is None else key
    (folder / "key.csv").write_text("item,call_id\n" + "".join(f"{i},{c}\n" for c, i in key.items()), "utf-8")
    (folder / "sample.json").write_text(json.dumps({"seed": 7, "sample": None, "stratified_by": None,
                                                    "items": len(key), "created_at": "2026-10-02T09:00:00+00:00"}))
    for name, grades in graders.items():
        (folder / f"{name}.csv").write_text(grades_csv(grades, **csv_options), "utf-8")
        (folder / f"{name}.order.json").write_text(json.dumps({"grader": name, "seed": 1, "order_sha256": "0" * 64}))
    return source


TRUTH = {"X-1": "pass", "X-2": "pass", "X-3": "fail", "X-4": "pass", "Y-1": "pass", "Y-3": "fail", "Y-4": "fail"}


def graded_source(make_source, primary: str = "logged", review: str = "disputed",
                  graders: dict[str, dict[str, str]] | None = None, judge: dict[str, str] | None = None) -> Path:
    source = make_source(rows_with_judge(judge), contract=grading_table(primary, review))
    other = dict(TRUTH, **{"X-2": "fail"})
    return write_grades(source, graders if graders is not None else {"ana": TRUTH, "ben": other})


def one_line(result, pattern: str) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    found = [line for line in result.output.splitlines() if re.search(pattern, line)]
    assert len(found) == 1, result.output
    return found[0]


# --- bad input, one line each -------------------------------------------------------

def test_a_grades_file_with_an_unknown_item(make_source, run_cli):
    source = graded_source(make_source)
    path = source / "experiments/mini/grades/ana.csv"
    path.write_text(path.read_text().replace(ITEMS["X-3"], "c0ffee000000"))
    line = one_line(run_cli("check", source), "unknown item")
    assert line.startswith("experiments/mini/grades/ana.csv:4: error [invalid] item: unknown item 'c0ffee000000'")


def test_a_wrong_rule_version_is_an_error_naming_file_line_and_field(make_source, run_cli):
    source = make_source(rows_with_judge(), contract=grading_table())
    write_grades(source, {"ana": TRUTH}, version="2")
    line = one_line(run_cli("check", source), "grade-rule-version")
    assert line.startswith("experiments/mini/grades/ana.csv:2: error [grade-rule-version] rule_version: 7 grades")
    assert "registers version '1'" in line


def test_two_grades_by_one_grader_for_one_item(make_source, run_cli):
    source = make_source(rows_with_judge(), contract=grading_table())
    again = (ITEMS["X-1"], "fail", "changed my mind", "2026-10-02T11:00:00+00:00", "1")
    write_grades(source, {"ana": TRUTH}, extra_rows=[again])
    line = one_line(run_cli("check", source), "graded twice")
    assert line.startswith(f"experiments/mini/grades/ana.csv:9: error [invalid] item: '{ITEMS['X-1']}' graded twice by ana (first at line 2)")


def test_a_judge_column_with_other_values(make_source, run_cli):
    source = make_source(rows_with_judge({"Y-3": "yes"}), contract=grading_table())
    write_grades(source, {"ana": TRUTH})
    line = one_line(run_cli("check", source), "judge_grade")
    assert line.startswith("experiments/mini/calls.csv:8: error [invalid] judge_grade: 'yes' is not a judge's grade")


def test_a_key_naming_a_call_not_in_the_log(make_source, run_cli):
    source = make_source(rows_with_judge(), contract=grading_table())
    write_grades(source, {"ana": {"X-1": "pass"}}, key={"X-1": ITEMS["X-1"], "Z-9": "d00000000009"})
    line = one_line(run_cli("check", source), "not a call")
    assert line.startswith("experiments/mini/grades/key.csv:3: error [invalid] call_id: 'Z-9' is not a call of the log")


def test_human_primary_without_grades_folder(make_source, run_cli):
    source = make_source(rows_with_judge(), contract=grading_table(primary="human"))
    line = one_line(run_cli("check", source), "grading.primary")
    assert re.match(r"experiments/mini/run.toml:\d+: error \[invalid\] grading.primary: is \"human\" but the run has no grades/", line)


def test_human_primary_in_a_score_run_is_refused_at_its_line(make_source, run_cli):
    # Blind grades say pass or fail: they cannot settle a score run's outcome, its score.
    contract = grading_table(primary="human").replace('primary_metric = "first_pass_rate"',
                                                      'primary_metric = "score"')
    rows = rows_with_judge()
    for row in rows:
        row["score"] = "0.5" if row["status"] == "ok" else ""
    source = make_source(rows, contract=contract)
    write_grades(source, {"ana": TRUTH})
    result = run_cli("check", source)
    assert result.exit_code == 1
    line = one_line(result, "grading.primary")
    assert re.match(r"experiments/mini/run.toml:\d+: error \[invalid\] grading.primary: is \"human\" but the run is "
                    r"scored \(primary_metric = \"score\"\): blind grades say pass or fail", line)


def test_a_grade_before_the_call_is_a_warning(make_source, run_cli):
    source = make_source(rows_with_judge(), contract=grading_table())
    write_grades(source, {"ana": TRUTH}, at="2026-09-30T10:00:00+00:00")
    result = run_cli("check", source)
    assert result.exit_code == 0, result.output
    assert re.search(r"grades/ana.csv:2: warning \[grade-before-call\] graded_at: 7 grades given before", result.output)


# --- joining --------------------------------------------------------------------------

def test_human_primary_fills_outcomes_by_the_review_rule(make_source):
    # The log passes; both blind graders fail X-1 and they disagree on X-2.
    graders = {"ana": dict(TRUTH, **{"X-1": "fail"}), "ben": dict(TRUTH, **{"X-1": "fail", "X-2": "fail"})}
    source = graded_source(make_source, primary="human", review="disputed", graders=graders)
    calls = {c.call_id: c for c in load_source(source).runs[0].calls}
    assert calls["X-1"].qualified is False and calls["X-1"].grades.how == "all 2 graders agree"
    assert calls["X-2"].outcome == "disputed" and not calls["X-2"].passed
    assert calls["X-4"].qualified is True
    assert calls["Y-2"].grades is None and calls["Y-2"].status == "timeout"
    assert [g.grader for g in calls["X-2"].grades.grades] == ["ana", "ben"]


def test_logged_primary_keeps_the_logged_outcomes(make_source):
    source = graded_source(make_source, primary="logged", graders={"ana": dict(TRUTH, **{"X-1": "fail"})})
    calls = {c.call_id: c for c in load_source(source).runs[0].calls}
    assert calls["X-1"].qualified is True and calls["X-1"].grades.resolved == "fail"


def _row(grader: str, grade: str, minute: int) -> GradeRow:
    when = parse_timestamp(f"2026-10-02T10:{minute:02d}:00+00:00")
    assert when is not None
    return GradeRow(grader, "a00000000001", grade, "", when, "", "1", "f", 2)  # type: ignore[arg-type]


@pytest.mark.parametrize("review,grades,expected", [
    ("majority", ["pass", "fail", "pass"], "pass"),
    ("majority", ["pass", "fail"], "disputed"),
    ("disputed", ["pass", "fail", "pass"], "disputed"),
    ("third-grader", ["pass", "fail", "fail"], "fail"),
    ("third-grader", ["fail", "fail", "pass"], "fail"),
    ("third-grader", ["pass", "fail"], "disputed"),
    ("majority", ["pass"], "pass"),
])
def test_review_rules(review, grades, expected):
    rows = [_row(f"g{i}", g, i) for i, g in enumerate(grades)]
    assert resolve(rows, review)[0] == expected


# --- the built site ------------------------------------------------------------------

def _claims(version: Path) -> dict[str, dict]:
    return {c["id"]: c for c in json.loads((version / "data/results.json").read_text())["claims"]}


@pytest.mark.slow
def test_built_site_carries_and_verify_recomputes_the_grading_claims(make_source, run_cli, tmp_path):
    judge = {"Y-3": "pass", "Y-4": "pass"}  # the judge passes both of Y's failures
    source = graded_source(make_source, judge=judge)
    out = tmp_path / "site"
    result = run_cli("build", source, "--out", out)
    assert result.exit_code == 0, result.output
    version = out / "v1"
    claims = _claims(version)
    kappa = claims["mini.graders.grader_agreement"]
    assert kappa["kind"] == "agreement" and kappa["interval"]["method"] == "cohen-kappa-asymptotic-se"
    assert sorted(kappa["evidence"]) == sorted(ITEMS)
    assert claims["mini.Y.judge_specificity"]["estimate"] == 0.0
    assert claims["mini.X.judge_sensitivity"]["numerator"] == 2  # X-2 is disputed: out of the subset
    assert claims["mini.Y.judge_corrected_pass_rate"]["estimate"] is None  # Se + Sp - 1 = 0
    assert "not estimable" in claims["mini.Y.judge_corrected_pass_rate"]["warnings"][0]
    assert claims["mini.Y.judge_corrected_pass_rate"]["not_finite"] == {"estimate": "undefined", "low": "undefined",
                                                                       "high": "undefined"}
    assert any("differential misclassification" in w for w in claims["mini.Y_vs_X.difference"]["warnings"])
    page = (version / "experiments/mini/index.html").read_text()
    assert "How outcomes were graded: blind" in page and "by 2 graders (ana, ben)" in page
    assert "κ = " in page and "not estimable" in page and "differential misclassification" in page
    assert "nan" not in page.lower().replace("nanosecond", "")
    verified = run_cli("verify", version)
    assert verified.exit_code == 0, verified.output
    assert "claims recomputed from data/ and equal" in verified.output

    # A tampered value (the manifest made to agree) is caught by the recomputation.
    body = json.loads((version / "data/results.json").read_text())
    for claim in body["claims"]:
        if claim["id"] == "mini.X.judge_sensitivity":
            claim["estimate"] = 0.99
    data = json.dumps(body).encode()
    (version / "data/results.json").write_bytes(data)
    manifest = json.loads((version / "manifest.json").read_text())
    manifest["files"]["data/results.json"] = "sha256:" + hashlib.sha256(data).hexdigest()
    (version / "manifest.json").write_text(json.dumps(manifest))
    tampered = run_cli("verify", version)
    assert tampered.exit_code == 1
    assert "claim mini.X.judge_sensitivity: estimate is 0.99 in results.json, recomputed 1.0" in tampered.output


@pytest.mark.slow
def test_a_run_without_grades_says_grades_as_logged(make_source, run_cli, tmp_path):
    out = tmp_path / "site"
    result = run_cli("build", make_source(), "--out", out)
    assert result.exit_code == 0, result.output
    page = (out / "v1/experiments/mini/index.html").read_text()
    assert "How outcomes were graded: grades as logged; blinding not recorded." in page


@pytest.mark.slow
def test_each_call_sheet_shows_every_grade_and_the_resolution(make_source, run_cli, tmp_path):
    source = graded_source(make_source, primary="human")
    out = tmp_path / "site"
    assert run_cli("build", source, "--out", out).exit_code == 0
    sheets = "".join(p.read_text() for p in (out / "store").glob("*.html"))
    section = sheets[sheets.index('id="X-2"') if 'id="X-2"' in sheets else sheets.index("Call X-2"):]
    section = section[:section.index("</section>")]
    assert "ana: <strong>pass</strong>" in section and "ben: <strong>fail</strong>" in section
    assert "Resolution by the registered review rule: <strong>disputed</strong>" in section


def test_a_judge_without_blind_grades_is_flagged_as_uncalibrated(make_source, run_cli):
    source = make_source(rows_with_judge(), contract=grading_table())
    result = run_cli("check", source)
    assert result.exit_code == 0, result.output
    assert re.search(r"run.toml:\d+: warning \[judge-uncalibrated\] grading.judge_column: the judge's grades "
                     r"\(judge_grade\) are not calibrated", result.output)


def test_three_graders_agree_by_fleiss_kappa_with_a_seeded_bootstrap(make_source):
    from reportgen.analysis.run import analyze_run
    from statsmodels.stats.inter_rater import fleiss_kappa

    third = dict(TRUTH, **{"Y-1": "fail"})
    source = graded_source(make_source, review="majority",
                           graders={"ana": TRUTH, "ben": dict(TRUTH, **{"X-2": "fail"}), "cy": third})
    agreement = analyze_run(load_source(source).runs[0]).grading.agreement
    assert agreement.kappa.method == "fleiss-kappa-item-bootstrap"
    # Oracle: statsmodels fleiss_kappa over the items x (pass, fail, disputed) counts; tolerance 1e-12.
    grades = [TRUTH, dict(TRUTH, **{"X-2": "fail"}), third]
    counts = [[sum(g[c] == k for g in grades) for k in ("pass", "fail", "disputed")] for c in sorted(TRUTH)]
    assert agreement.kappa.estimate == pytest.approx(fleiss_kappa(counts), abs=1e-12)
    assert agreement.kappa.low <= agreement.kappa.estimate <= agreement.kappa.high


def test_human_primary_names_the_complete_returns_left_ungraded(make_source):
    from reportgen.analysis.run import analyze_run

    partial = {c: g for c, g in TRUTH.items() if c != "Y-4"}
    source = graded_source(make_source, primary="human", graders={"ana": partial})
    grading = analyze_run(load_source(source).runs[0]).grading
    assert grading.ungraded == ("Y-4",) and grading.n_filled == 6 and grading.agreement is None


def test_an_empty_grades_file_is_one_line(make_source, run_cli):
    source = graded_source(make_source)
    (source / "experiments/mini/grades/ben.csv").write_text("")
    line = one_line(run_cli("check", source), "ben.csv")
    assert line.startswith("experiments/mini/grades/ben.csv:1: error [invalid] empty: the first line must be the header")


KEY = "sk-proj-" + "q" * 40


@pytest.mark.slow
def test_a_credential_in_a_graders_reason_is_refused_or_redacted(make_source, run_cli, tmp_path):
    source = graded_source(make_source)
    path = source / "experiments/mini/grades/ana.csv"
    path.write_text(path.read_text().replace("looked at it, fail", f"pasted {KEY} by mistake", 1))
    checked = run_cli("check", source)
    assert checked.exit_code == 1
    assert re.search(r"experiments/mini/grades/ana.csv:\d+: error \[credential\]", checked.output)
    out = tmp_path / "site"
    built = run_cli("build", source, "--out", out, "--redact")
    assert built.exit_code == 0, built.output
    published = [p for p in out.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    assert published == []
    assert "[REDACTED" in (out / "v1/data/mini/grades/ana.csv").read_text()
    assert run_cli("verify", out / "v1").exit_code == 0
