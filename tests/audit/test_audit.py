"""The protocol audit: one small source per rule, broken in exactly that way."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import CONTRACT, default_rows
from reportgen.audit.stage import audit_source
from reportgen.load.source import load_source
from sitecheck import parse, text

LOG = "experiments/mini/calls.csv"
RUN = "experiments/mini/run.toml"


def findings_of(source):
    return [f for a in audit_source(load_source(source)) for f in a.findings]


def only(findings, code):
    chosen = [f for f in findings if f.code == code]
    assert chosen, [str(f) for f in findings]
    return chosen[0]


def test_clean_source_has_no_finding(make_source):
    assert findings_of(make_source()) == []


def rows_where(**changes):
    """default rows with per-call changes: rows_where(**{"X-1": {...}})"""
    rows = default_rows()
    for row in rows:
        row.update(changes.get(row["call_id"], {}))
    return rows


def with_column(rows, column, default=""):
    for row in rows:
        row.setdefault(column, default)
    return rows


def test_calls_missing(make_source):
    rows = [r for r in default_rows() if r["call_id"] != "Y-4"]
    f = only(findings_of(make_source(rows)), "calls-missing")
    assert str(f) == (f"{LOG}: warning [calls-missing] service: Y: 3 of 4 planned first submissions are in the "
                      "log; the 1 missing counts as a non-pass (dropped failures or a run stopped early?)")


def test_calls_over_plan(make_source):
    rows = default_rows() + [{**default_rows()[0], "call_id": "X-5", "started_at": "2026-10-01T09:09:00+00:00"}]
    f = only(findings_of(make_source(rows)), "calls-over-plan")
    assert (f.file, f.line, f.field) == (LOG, 10, "service")
    assert "X: 5 first submissions against 4 planned" in f.message and "optional stopping" in f.message


def test_block_unbalanced(make_source):
    f = only(findings_of(make_source(rows_where(**{"X-3": {"block_id": "1"}}))), "block-unbalanced")
    assert f.message == "X: block 1 has 3 calls, the plan has 2 per block"


def test_pilot_rows(make_source):
    rows = with_column(default_rows(), "phase", "formal")
    rows.append({**rows[0], "call_id": "X-0", "phase": "pilot", "started_at": "2026-10-01T08:59:00+00:00"})
    f = only(findings_of(make_source(rows)), "pilot-rows")
    assert (f.line, f.field) == (10, "phase")
    assert f.message == "1 pilot rows are in the formal log; they are kept out of every statistic"


def test_pilot_run(make_source):
    f = only(findings_of(make_source(contract=CONTRACT.replace('phase = "formal"', 'phase = "pilot"'))), "pilot-run")
    assert (f.file, f.line, f.field) == (RUN, 5, "run.phase")


def test_unregistered_exclusion_is_an_error(make_source, run_cli, tmp_path):
    rows = with_column(with_column(default_rows(), "excluded"), "exclusion_reason")
    rows[1].update(excluded="true", exclusion_reason="looked wrong")
    source = make_source(rows)
    f = only(findings_of(source), "exclusion-not-registered")
    assert f.severity == "error" and (f.line, f.field) == (3, "exclusion_reason")
    assert "call X-2 is excluded for 'looked wrong', which is not one of the contract's exclusion_rules" in f.message
    result = run_cli("build", source, "--out", tmp_path / "site")
    assert result.exit_code == 1 and not (tmp_path / "site").exists()
    assert "1 error found; nothing was published." in result.output


def test_registered_exclusion_leaves_the_denominator(make_source, run_cli, tmp_path):
    rows = with_column(with_column(default_rows(), "excluded"), "exclusion_reason")
    rows[2].update(excluded="true", exclusion_reason="harness_error")  # X-3, a fail
    contract = CONTRACT.replace("concurrency = 1", 'concurrency = 1\nexclusion_rules = ["harness_error"]')
    source = make_source(rows, contract=contract)
    assert only(findings_of(source), "excluded").severity == "warning"
    assert run_cli("build", source, "--out", tmp_path / "site", "-q").exit_code == 0
    claims = {c["id"]: c for c in json.loads(text(tmp_path / "site/v1/data/results.json"))["claims"]}
    assert (claims["mini.X.first_pass_rate"]["numerator"], claims["mini.X.first_pass_rate"]["denominator"]) == (3, 3)


def test_not_interleaved(make_source):
    f = only(findings_of(make_source(rows_where(**{"Y-1": {"started_at": "2026-10-01T09:05:00+00:00"}}))),
             "not-interleaved")
    assert (f.line, f.field, f.scope) == (2, "started_at", "comparison")
    assert f.message.startswith("block 1: the services ran one after another (X then Y), not interleaved")


def test_concurrency_exceeded(make_source):
    f = only(findings_of(make_source(rows_where(**{"Y-2": {"latency_ms": "60000"}}))), "concurrency-exceeded")
    assert f.message == ("up to 2 calls were in flight at once (from started_at and latency_ms); "
                         "the contract registered 1")


def test_concurrency_unequal(make_source):
    changes = {f"X-{i}": {"started_at": f"2026-10-01T10:{10 * i:02d}:00+00:00", "latency_ms": "1000"} for i in range(1, 5)}
    changes.update({f"Y-{i}": {"started_at": f"2026-10-01T09:00:0{i}+00:00", "latency_ms": "60000",
                               "status": "ok", "qualified": "false", "artifact_path": "artifacts/X-1"}
                    for i in range(1, 5)})
    f = only(findings_of(make_source(rows_where(**changes))), "concurrency-unequal")
    assert "on average: X 0.0, Y 1.5" in f.message


def test_returned_model_differs(make_source):
    f = only(findings_of(make_source(rows_where(**{"Y-3": {"returned_model": "m-0-mini"}}))), "returned-model-differs")
    assert (f.line, f.field, f.services) == (8, "returned_model", ("Y",))
    assert f.message.startswith("Y: 1 call (Y-3) returned m-0-mini instead of the requested m-1")


def contract_with_params(x: str, y: str) -> str:
    parts = CONTRACT.split('requested_model = "m-1"\n')
    return parts[0] + f'requested_model = "m-1"\n{x}' + parts[1] + f'requested_model = "m-1"\n{y}' + parts[2]


def test_parameter_unknown_on_one_side(make_source):
    contract = contract_with_params('[service.params]\nseed = "unsupported"\n', "[service.params]\nseed = 7\n")
    f = only(findings_of(make_source(contract=contract)), "parameter-not-comparable")
    assert (f.file, f.line, f.field) == (RUN, 26, "service.params.seed")
    assert f.message.startswith("seed is not known to be equal across services (X: unsupported; Y: 7)")


def test_snapshot_unknown_on_one_side(make_source):
    contract = contract_with_params('snapshot = "m-1-2026-09"\n', "")
    f = only(findings_of(make_source(contract=contract)), "snapshot-unknown")
    assert f.services == ("Y",) and f.field == "service.snapshot"


def test_identical_outputs(make_source):
    source = make_source()
    artifacts = source / "experiments/mini/artifacts"
    shutil.rmtree(artifacts / "X-2")
    shutil.copytree(artifacts / "X-1", artifacts / "X-2")
    f = only(findings_of(source), "identical-outputs")
    assert f.message == ("X: 2 calls in 1 group got identical responses (byte-identical artifacts) to the same "
                         "request (for example X-1, X-2) but are counted as independent draws")
    assert f.line == 3


def test_repeated_seed(make_source):
    rows = with_column(default_rows(), "seed")
    rows[0]["seed"] = rows[1]["seed"] = "42"
    f = only(findings_of(make_source(rows)), "repeated-seed")
    assert (f.line, f.field) == (3, "seed")
    assert f.message.startswith("X: seed 42 is used by 2 calls counted as independent draws")


def test_repetitions_as_tasks(make_source):
    rows = with_column(default_rows(), "task_id")
    for row in rows:
        row["task_id"] = "t1" if row["call_id"][-1] in "12" else "t2"
    f = only(findings_of(make_source(rows)), "repetitions-as-tasks")
    assert "repetitions of a task are not new tasks" in f.message and f.scope == "run"


def test_clusters_counted_as_independent_calls(make_source):
    rows = with_column(default_rows(), "cluster_id")
    for row in rows:
        row["cluster_id"] = "doc-1" if row["call_id"] in ("Y-1", "Y-2") else row["call_id"]
    f = only(findings_of(make_source(rows)), "clusters-as-independent")
    assert f.services == ("Y",) and (f.line, f.field) == (2, "cluster_id")
    assert "its intervals are too narrow" in f.message
    # The paired design resamples whole clusters: nothing to warn about there.
    paired = CONTRACT.replace('design = "independent"', 'design = "paired"')
    pairs = with_column(rows, "pair_id")
    for row in pairs:
        row["pair_id"] = row["call_id"][-1]
    assert not [f for f in findings_of(make_source(pairs, contract=paired)) if f.code == "clusters-as-independent"]


def test_outside_window(make_source):
    contract = CONTRACT.replace("concurrency = 1", 'concurrency = 1\nwindow_start = "2026-10-01T09:00:00+00:00"\n'
                                'window_end = "2026-10-01T09:03:59+00:00"')
    f = only(findings_of(make_source(contract=contract)), "outside-window")
    assert (f.line, f.field) == (5, "started_at")
    assert "call X-4 started at 2026-10-01T09:04:00+00:00, outside the registered window" in f.message


def test_before_registration(make_source):
    contract = CONTRACT.replace('registered_at = "2026-10-01T08:00:00+00:00"', 'registered_at = "2026-10-01T09:02:10+00:00"')
    found = [f for f in findings_of(make_source(contract=contract)) if f.code == "before-registration"]
    assert [f.line for f in found] == [2, 3, 6]


def test_retry_beyond_contract(make_source):
    rows = with_column(default_rows(), "attempt", "1")
    rows.append({**rows[5], "call_id": "Y-2b", "attempt": "2", "status": "ok", "qualified": "true",
                 "artifact_path": "artifacts/Y-2b", "started_at": "2026-10-01T09:02:59+00:00", "latency_ms": "100"})
    contract = CONTRACT.replace("concurrency = 1", 'concurrency = 1\nretry = "none"')
    f = only(findings_of(make_source(rows, contract=contract)), "retry-beyond-contract")
    assert (f.line, f.field) == (10, "attempt")
    assert f.message == "call Y-2b is attempt 2, but the contract's retry rule ('none') allows 1"


def test_selection_caution(make_source):
    contract = CONTRACT.replace("concurrency = 1", "concurrency = 1\ncandidates_tried = 15")
    f = only(findings_of(make_source(contract=contract)), "selection-caution")
    assert (f.line, f.scope) == (15, "verdict")


def test_request_missing(make_source):
    source = make_source()
    for path in (source / "experiments/mini/requests").glob("*.json"):
        path.unlink()
    f = only(findings_of(source), "request-missing")
    assert f.message.endswith("the request behind 8 calls cannot be re-checked")


def test_one_missing_request_behind_one_call_is_said_in_the_singular(make_source):
    rows = default_rows()
    rows[0]["request_hash"] = "sha256:" + "0" * 64  # a request of its own, with no body
    f = only(findings_of(make_source(rows)), "request-missing")
    assert f.message.endswith("the request behind 1 call cannot be re-checked") and f.calls == (rows[0]["call_id"],)


def test_complete_call_without_artifact(make_source):
    f = only(findings_of(make_source(rows_where(**{"X-2": {"artifact_path": ""}}))), "artifact-missing")
    assert (f.line, f.field) == (3, "artifact_path")


@pytest.mark.parametrize("where,secret,kind", [
    ("response", "sk-ant-api03-" + "a" * 40, "Anthropic API key"),
    ("response", "sk-proj-" + "b" * 40, "OpenAI-style API key"),
    ("response", "AKIA" + "ABCDEFGHIJKLMNOP", "AWS access key id"),
    ("response", "AIza" + "c" * 35, "Google API key"),
    ("response", "ghp_" + "d" * 36, "GitHub token"),
    ("log", "Authorization: Bearer " + "e" * 30, "bearer token"),
    ("log", '"api_key": "' + "f" * 24 + '"', "API key field"),
])
def test_credentials_are_refused(make_source, run_cli, tmp_path, where, secret, kind):
    if where == "log":
        source = make_source(rows_where(**{"X-2": {"grade_reason": f"grader note {secret}"}}))
        location = f"{LOG}:3"
    else:
        source = make_source()
        response = source / "experiments/mini/artifacts/X-1/response.txt"
        response.write_text(response.read_text() + f"debug: {secret}\n")
        location = "experiments/mini/artifacts/X-1/response.txt:5"
    f = only(findings_of(source), "credential")
    assert f.severity == "error" and f"{f.file}:{f.line}" == location
    article = "an" if kind[0] in "AO" else "a"
    assert f.message.startswith(f"looks like {article} {kind}: remove it (and revoke it) before publishing")
    result = run_cli("build", source, "--out", tmp_path / "site")
    assert result.exit_code == 1 and not (tmp_path / "site").exists()
    assert secret not in result.output


def test_findings_mark_the_claims_they_weaken(make_source, run_cli, tmp_path):
    source = make_source(rows_where(**{"Y-3": {"returned_model": "m-0-mini"}}))
    assert run_cli("build", source, "--out", tmp_path / "site", "-q").exit_code == 0
    version = tmp_path / "site/v1"
    results = json.loads(text(version / "data/results.json"))
    (finding,) = results["findings"]
    claims = {c["id"]: c for c in results["claims"]}
    assert claims["mini.Y.first_pass_rate"]["findings"] == [finding["id"]]
    assert claims["mini.Y_vs_X.difference"]["findings"] == [finding["id"]]
    assert claims["mini.X.first_pass_rate"]["findings"] == []
    experiment = version / "experiments/mini/index.html"
    assert f"finding-{finding['id']}" in parse(experiment).ids
    assert f'index.html#finding-{finding["id"]}' in text(version / "index.html")
    assert run_cli("verify", version).exit_code == 0


def test_check_exit_codes(make_source, run_cli):
    clean = make_source()
    result = run_cli("check", clean)
    assert result.exit_code == 0 and result.output.endswith("1 run, 8 calls checked: 0 errors, 0 warnings\n")
    warned = make_source(rows_where(**{"Y-3": {"returned_model": "m-0-mini"}}))
    assert run_cli("check", warned).exit_code == 0
    strict = run_cli("check", warned, "--strict")
    assert strict.exit_code == 1
    assert strict.output.splitlines()[0].startswith(f"{LOG}:8: warning [returned-model-differs] returned_model: Y:")
    broken = make_source(rows_where(**{"X-1": {"status": "crashed"}}))
    invalid = run_cli("check", broken)
    assert invalid.exit_code == 1
    assert invalid.output.splitlines()[0] == (f"{LOG}:2: error [invalid] status: 'crashed' is not one of ok, timeout, "
                                              "api_error, stream_cut, length_limit, harness_error")
    assert run_cli("check", "--no-such-option").exit_code == 2
