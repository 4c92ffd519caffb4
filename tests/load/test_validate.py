"""Every user-facing input error: one clear line naming file, line and field.

Each case starts from a valid small source and breaks exactly one thing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import CONTRACT, default_rows
from reportgen.errors import InputError
from reportgen.load.source import load_source

LOG = "experiments/mini/calls.csv"
RUN = "experiments/mini/run.toml"


def problems_of(source: Path) -> list[str]:
    with pytest.raises(InputError) as info:
        load_source(source)
    return [str(p) for p in info.value.problems]


def test_valid_source_loads(make_source):
    source = load_source(make_source())
    (run,) = source.runs
    assert [c.call_id for c in run.calls][:2] == ["X-1", "X-2"]
    assert run.calls[5].status == "timeout" and run.calls[5].qualified is None
    assert source.digest.startswith("sha256:")


def row_case(field, value, index=0):
    def mutate(rows):
        rows[index][field] = value
        return rows
    return mutate


# (mutation of the default rows, expected message: "file:line: field: ...text")
ROW_CASES = {
    "run_id": (row_case("run_id", "other"), f"{LOG}:2: run_id: 'other' does not match run.id 'mini'"),
    "service": (row_case("service", "Z"), f"{LOG}:2: service: 'Z' is not a [[service]] id"),
    "block": (row_case("block_id", "9"), f"{LOG}:2: block_id: '9' is not one of the registered blocks (1, 2)"),
    "naive time": (row_case("started_at", "2026-10-01 09:03"),
                   f"{LOG}:2: started_at: '2026-10-01 09:03' has no UTC offset; write it as 2026-10-01T09:03:00+00:00"),
    "bad time": (row_case("started_at", "yesterday"), f"{LOG}:2: started_at: 'yesterday' is not an ISO 8601 date and time"),
    "hash format": (row_case("request_hash", "md5:abc"), f"{LOG}:2: request_hash: 'md5:abc' is not 'sha256:' followed by 64"),
    "status": (row_case("status", "crashed"), f"{LOG}:2: status: 'crashed' is not one of ok, timeout"),
    "latency": (row_case("latency_ms", "-3"), f"{LOG}:2: latency_ms: '-3' is not a non-negative number"),
    "qualified word": (row_case("qualified", "maybe"), f"{LOG}:2: qualified: 'maybe' is not true or false"),
    "graded failure": (row_case("qualified", "true", 5), f"{LOG}:7: qualified: must be empty for a technical failure"),
    "ungraded complete": (row_case("qualified", ""), f"{LOG}:2: qualified: a complete return (status 'ok') needs a grade"),
    "call id": (row_case("call_id", "../x"), f"{LOG}:2: call_id: '../x' is not a usable id"),
    "duplicate id": (row_case("call_id", "X-1", 1), f"{LOG}:3: call_id: 'X-1' was already used on line 2"),
    "absolute artifact": (row_case("artifact_path", "/etc/passwd"), f"{LOG}:2: artifact_path: '/etc/passwd' is absolute"),
    "escaping artifact": (row_case("artifact_path", "../../reportgen.toml"),
                          f"{LOG}:2: artifact_path: '../../reportgen.toml' leaves the experiment folder"),
    "missing artifact": (row_case("artifact_path", "missing/nope"),
                         f"{LOG}:2: artifact_path: 'missing/nope' does not exist in the experiment folder"),
}


@pytest.mark.parametrize("name", sorted(ROW_CASES))
def test_row_errors(make_source, name):
    mutate, expected = ROW_CASES[name]
    messages = problems_of(make_source(mutate(default_rows())))
    assert any(m.startswith(expected) for m in messages), messages


def test_optional_column_errors(make_source):
    rows = default_rows()
    for row in rows:
        row.update(attempt="1", phase="formal", disputed="", critical="")
    rows[0].update(attempt="0", phase="warmup", disputed="perhaps", critical="2")
    messages = problems_of(make_source(rows))
    for expected in (f"{LOG}:2: attempt: '0' is not a positive integer",
                     f"{LOG}:2: phase: 'warmup' is not 'pilot' or 'formal'",
                     f"{LOG}:2: disputed: 'perhaps' is not true or false",
                     f"{LOG}:2: critical: '2' is not true or false"):
        assert any(m.startswith(expected) for m in messages), messages


def test_every_problem_is_reported_at_once_sorted(make_source):
    rows = default_rows()
    rows[3]["status"] = "crashed"
    rows[0]["service"] = "Z"
    messages = problems_of(make_source(rows))
    assert messages[0].startswith(f"{LOG}:2: service")
    assert messages[1].startswith(f"{LOG}:5: status")


def test_symlink_leaving_the_folder_is_refused(make_source, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("evaluator's own file")
    rows = default_rows()
    rows[0]["artifact_path"] = "leak"
    source = make_source(rows)
    os.symlink(outside, source / "experiments/mini/leak")
    messages = problems_of(source)
    assert f"{LOG}:2: artifact_path: 'leak' leaves the experiment folder (through a symbolic link)" in messages


def test_request_hash_mismatch(make_source):
    source = make_source()
    request = next((source / "experiments/mini/requests").glob("*.json"))
    request.write_text('{"model": "m-2"}')
    messages = problems_of(source)
    assert any(m.startswith(f"{LOG}:2: request_hash: sha256:") and "does not match requests/" in m
               and "whose canonical JSON hashes to sha256:" in m for m in messages), messages


def test_request_file_that_is_not_json(make_source):
    source = make_source()
    request = next((source / "experiments/mini/requests").glob("*.json"))
    request.write_text("{not json")
    messages = problems_of(source)
    assert any(m.startswith(f"experiments/mini/requests/{request.name}: not valid UTF-8 JSON") for m in messages)


def test_request_hash_ignores_formatting(make_source):
    source = make_source()
    request = next((source / "experiments/mini/requests").glob("*.json"))
    import json
    body = json.loads(request.read_text())
    # Other whitespace and the keys in another order: the same canonical JSON.
    reformatted = json.dumps(dict(reversed(list(body.items()))), indent=4, sort_keys=False)
    assert reformatted != request.read_text()
    request.write_text(reformatted)
    (run,) = load_source(source).runs  # no InputError: the logged hash still matches
    # ...and the body is kept, under the logged hash, as the bytes of its file.
    assert {c.request_hex for c in run.calls} == {request.stem}
    assert dict(run.requests) == {request.stem: reformatted.encode("utf-8")}


# Shape errors of the log file itself.
def test_missing_column(make_source):
    rows = [{k: v for k, v in r.items() if k != "latency_ms"} for r in default_rows()]
    assert problems_of(make_source(rows)) == [f"{LOG}:1: latency_ms: missing required column(s): latency_ms"]


def test_duplicate_column(make_source):
    text = make_source_text(make_source)
    header, rest = text.split("\n", 1)
    source = make_source(log_text=header + ",status\n" + "\n".join(line + ",ok" for line in rest.splitlines()) + "\n")
    assert f"{LOG}:1: status: column appears twice in the header" in problems_of(source)


def make_source_text(make_source) -> str:
    return (make_source() / LOG).read_text()


def test_wrong_field_count(make_source):
    text = make_source_text(make_source)
    lines = text.splitlines()
    lines[2] += ",extra"
    messages = problems_of(make_source(log_text="\n".join(lines) + "\n"))
    assert messages == [f"{LOG}:3: has 17 fields, the header has 16"]


def test_bad_quoting(make_source):
    text = make_source_text(make_source)
    lines = text.splitlines()
    lines[3] = lines[3].replace("mini", '"mini"x', 1)
    messages = problems_of(make_source(log_text="\n".join(lines) + "\n"))
    assert messages[0].startswith(f"{LOG}:4: not valid CSV:")


def test_empty_log(make_source):
    assert problems_of(make_source(log_text="")) == [f"{LOG}:1: empty file: expected a header row naming the columns"]


def test_header_only_log(make_source):
    text = make_source_text(make_source).splitlines()[0] + "\n"
    assert problems_of(make_source(log_text=text)) == [f"{LOG}:1: the log has no calls"]


def test_binary_garbage(make_source):
    source = make_source()
    (source / LOG).write_bytes(b"run_id,block\n\xff\xfe\x00garbage")
    assert problems_of(source) == [f"{LOG}:2: not UTF-8 text (byte 13); save the log as UTF-8"]


def test_nul_byte(make_source):
    source = make_source()
    (source / LOG).write_bytes(b"run_id\nab\x00c\n")
    assert problems_of(source) == [f"{LOG}:2: contains a NUL byte: this is not a text log"]


JSONL = "experiments/mini/calls.jsonl"


def test_jsonl_log_loads(make_source):
    source = load_source(make_source(log_name="calls.jsonl"))
    assert len(source.runs[0].calls) == 8


@pytest.mark.parametrize("line,expected", [
    ("{nope", f"{JSONL}:9: not valid JSON: Expecting property name enclosed in double quotes (column 2)"),
    ("[1, 2]", f"{JSONL}:9: each line must be a JSON object"),
    ('{"run_id": {"a": 1}}', f"{JSONL}:9: run_id: must be a string, number, boolean or null"),
    ('{"run_id": "mini"}', f"{JSONL}:9: block_id: missing required field(s): block_id"),
])
def test_jsonl_errors(make_source, line, expected):
    source = make_source(log_name="calls.jsonl")
    path = source / JSONL
    path.write_text(path.read_text() + line + "\n")
    messages = problems_of(source)
    assert any(m.startswith(expected) for m in messages), messages


def test_empty_jsonl(make_source):
    assert problems_of(make_source(log_name="calls.jsonl", log_text="\n")) == [
        f"{JSONL}:1: empty file: expected one JSON object per call"]


def test_two_logs(make_source):
    source = make_source()
    (source / "experiments/mini/calls.jsonl").write_text("")
    assert problems_of(source) == [
        "experiments/mini: more than one call log; keep exactly one of calls.csv, calls.jsonl, calls.parquet"]


def test_no_log(make_source):
    source = make_source()
    (source / LOG).unlink()
    assert problems_of(source) == ["experiments/mini: no call log: expected calls.csv, calls.jsonl or calls.parquet"]


# The contract and the site config.
def contract_case(old, new):
    return lambda text: text.replace(old, new, 1)


CONTRACT_CASES = {
    "design": (contract_case('design = "independent"', 'design = "crossover"'),
               f"{RUN}:7: run.design: 'crossover' is not one of independent, paired"),
    "paired needs pair_id": (contract_case('design = "independent"', 'design = "paired"'),
                             f"{LOG}:2: pair_id: required: a paired design matches the two services' rows by pair_id"),
    "slices": (contract_case("concurrency = 1", 'concurrency = 1\nslices = "long"'),
               f"{RUN}:15: run.slices: must be a list of slice names"),
    "failure_score": (contract_case("concurrency = 1", 'concurrency = 1\nfailure_score = "zero"'),
                      f"{RUN}:15: run.failure_score: must be a number"),
    "id": (contract_case('id = "mini"', 'id = "maxi"'),
           f"{RUN}:2: run.id: 'maxi' differs from the experiment folder name 'mini'"),
    "phase": (contract_case('phase = "formal"', 'phase = "final"'), f"{RUN}:5: run.phase: must be 'pilot' or 'formal'"),
    "registered_at": (contract_case('registered_at = "2026-10-01T08:00:00+00:00"', 'registered_at = "2026-10-01"'),
                      f"{RUN}:6: run.registered_at: '2026-10-01' is not an ISO 8601 time with a UTC offset"),
    "metric": (lambda text: text.replace('primary_metric = "first_pass_rate"', 'primary_metric = "score"', 1)
               .replace('design = "independent"', 'design = "longitudinal"', 1),
               f"{RUN}:8: run.primary_metric: a numeric score is not analysed in the longitudinal design"),
    "metric name": (contract_case('primary_metric = "first_pass_rate"', 'primary_metric = "f1"'),
                    f"{RUN}:8: run.primary_metric: 'f1' is not one of first_pass_rate, score"),
    "alpha": (contract_case("alpha = 0.05", "alpha = 5"), f"{RUN}:11: run.alpha: must be between 0.0 and 1.0"),
    "baseline": (contract_case('baseline = "X"', 'baseline = "W"'), f"{RUN}:9: run.baseline: 'W' is not a [[service]] id"),
    "candidates": (contract_case('candidates = ["Y"]', 'candidates = ["Y", "X"]'),
                   f"{RUN}:10: run.candidates: the independent design compares exactly one candidate"),
    "planned": (contract_case("planned_calls = 4", "planned_calls = -4"), f"{RUN}:12: run.planned_calls: required: a positive integer"),
    "planned table": (contract_case("planned_calls = 4", "planned_calls = {X = 4}"),
                      f"{RUN}:12: run.planned_calls: no planned count for service 'Y'"),
    "concurrency": (contract_case("concurrency = 1", "concurrency = 0"), f"{RUN}:14: run.concurrency: must be a positive integer"),
    "service id": (contract_case('id = "X"', 'id = "X/Y"'), f"{RUN}:22: service[1].id: 'X/Y' is not a usable service id"),
    "no run table": (contract_case("[run]", "[runn]"), f"{RUN}: run: missing [run] table"),
    "toml": (contract_case('title = "Mini run"', 'title = "Mini run'), f"{RUN}:3: not valid TOML"),
}


@pytest.mark.parametrize("name", sorted(CONTRACT_CASES))
def test_contract_errors(make_source, name):
    mutate, expected = CONTRACT_CASES[name]
    messages = problems_of(make_source(contract=mutate(CONTRACT)))
    assert any(m.startswith(expected) for m in messages), messages


@pytest.mark.parametrize("site,expected", [
    ('version = "v1"\n', "reportgen.toml: title: required: a non-empty string"),
    ('title = "T"\nversion = "v 1/.."\n', "reportgen.toml:2: version: 'v 1/..' is not a usable version label"),
    ('title = "T"\nexperiments = ["nope"]\n', "reportgen.toml: experiments: experiment 'nope' has no folder experiments/nope/"),
    ('title = "T"\nbuilt_at = "last week"\n', "reportgen.toml:2: built_at: must be an ISO 8601 date and time with a UTC offset"),
    ('title = \n', "reportgen.toml:1: not valid TOML"),
])
def test_site_config_errors(make_source, site, expected):
    messages = problems_of(make_source(site=site))
    assert any(m.startswith(expected) for m in messages), messages


def test_missing_source_folder(tmp_path):
    assert problems_of(tmp_path / "nowhere") == [f"{tmp_path / 'nowhere'}: source folder not found"]


def test_missing_experiments_folder(tmp_path):
    (tmp_path / "reportgen.toml").write_text('title = "T"\n')
    assert problems_of(tmp_path) == ["experiments: folder not found: put each run in experiments/<run_id>/"]


def test_unknown_parameter_values_are_kept(make_source):
    contract = CONTRACT.replace('requested_model = "m-1"\n', 'requested_model = "m-1"\n[service.params]\n'
                                'seed = "unsupported"\nreasoning_effort = "unknown"\n', 1)
    source = load_source(make_source(contract=contract))
    params = source.runs[0].contract.service("X").params
    assert dict(params) == {"seed": "unsupported", "reasoning_effort": "unknown"}
