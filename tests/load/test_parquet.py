"""calls.parquet: the same rows as calls.csv give the same calls, claims and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.csv  # noqa: F401  (pa.csv)
import pyarrow.parquet as pq
import pytest

from conftest import default_rows
from reportgen.errors import InputError
from reportgen.model.outcomes import STATUSES
from reportgen.load.source import load_source
from sitecheck import text


def to_parquet(source: Path, typed: bool) -> None:
    """Replace the source's calls.csv by a Parquet file of the same rows: all text, or
    with the types a data tool would write (numbers, booleans)."""
    log = source / "experiments/mini/calls.csv"
    table = pa.csv.read_csv(log, convert_options=pa.csv.ConvertOptions(
        column_types=None if typed else {c: pa.string() for c in log.read_text().splitlines()[0].split(",")},
        strings_can_be_null=False, quoted_strings_can_be_null=False))
    if typed:
        assert pa.types.is_boolean(table.schema.field("qualified").type)
    pq.write_table(table, source / "experiments/mini/calls.parquet")
    log.unlink()


def claims_of(version: Path) -> list[dict]:
    return json.loads(text(version / "data/results.json"))["claims"]


@pytest.mark.parametrize("typed", [False, True])
def test_parquet_and_csv_give_the_same_claims(make_source, run_cli, tmp_path, typed):
    source = make_source()
    assert run_cli("build", source, "--out", tmp_path / "csv", "-q").exit_code == 0
    to_parquet(source, typed)
    calls = load_source(source).runs[0].calls
    assert [(c.call_id, c.line, c.status, c.qualified, c.latency_ms) for c in calls] == \
        [(r["call_id"], i, r["status"], {"true": True, "false": False}.get(r["qualified"]),
          float(r["latency_ms"]) if r["latency_ms"] else None) for i, r in enumerate(default_rows(), 1)]
    result = run_cli("build", source, "--out", tmp_path / "parquet", "-q")
    assert result.exit_code == 0, result.output
    version = tmp_path / "parquet/v1"
    assert claims_of(version) == claims_of(tmp_path / "csv/v1")
    assert (version / "data/mini/calls.parquet").read_bytes() == (source / "experiments/mini/calls.parquet").read_bytes()
    verified = run_cli("verify", version)
    assert verified.exit_code == 0, verified.output


def test_a_bad_value_names_file_row_and_field(make_source):
    rows = default_rows()
    rows[2]["status"] = "weird"
    source = make_source(rows)
    to_parquet(source, typed=False)
    with pytest.raises(InputError) as info:
        load_source(source)
    assert [str(p) for p in info.value.problems] == [
        f"experiments/mini/calls.parquet:3: status: 'weird' is not one of {', '.join(STATUSES)}"]


def test_not_parquet(make_source):
    source = make_source()
    (source / "experiments/mini/calls.csv").unlink()
    (source / "experiments/mini/calls.parquet").write_bytes(b"run_id,service\n")
    with pytest.raises(InputError) as info:
        load_source(source)
    (problem,) = info.value.problems
    assert str(problem).startswith("experiments/mini/calls.parquet: not a readable Parquet file")


def test_a_credential_in_a_parquet_log_is_found_and_not_redacted(make_source, run_cli, tmp_path):
    rows = default_rows()
    rows[1]["grade_reason"] = "note Bearer " + "e" * 30
    rows[0]["grade_reason"] = ""
    source = make_source(rows)
    to_parquet(source, typed=False)
    result = run_cli("build", source, "--out", tmp_path / "site")
    assert result.exit_code == 1 and "experiments/mini/calls.parquet:2" in result.output
    assert "looks like a bearer token" in result.output and "e" * 30 not in result.output
    result = run_cli("build", source, "--out", tmp_path / "site", "--redact")
    assert result.exit_code == 1 and not (tmp_path / "site/v1").exists()
    assert "--redact rewrites text logs only; convert this Parquet log to CSV" in result.output
