"""Plan -> schedule -> a log that follows it -> check and build: no schedule finding;
each kind of deviation from the schedule yields exactly its own finding."""

from __future__ import annotations

import csv
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from conftest import COLUMNS, REQUEST, request_hash
from reportgen.audit.stage import audit_source
from reportgen.errors import InputError
from reportgen.load.source import load_source
from reportgen.plan import PlanRequest, make_plan, write_plan

REGISTERED = "2026-10-01T00:00:00+00:00"
START = datetime(2026, 10, 1, 9, 0, tzinfo=timezone.utc)


def planned_source(root: Path, design: str = "independent", effect: float = 0.35, baseline: float = 0.5) -> Path:
    source = root / "source"
    (source / "experiments").mkdir(parents=True)
    (source / "reportgen.toml").write_text('title = "Planned"\nversion = "v1"\n', encoding="utf-8")
    request = PlanRequest(design, effect, baseline_rate=baseline, blocks=4)
    write_plan(make_plan(request), source / "experiments" / "ab", registered_at=REGISTERED)
    return source


def schedule_of(source: Path) -> list[dict[str, str]]:
    with (source / "experiments" / "ab" / "schedule.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def follow(source: Path, rows: list[dict[str, str]] | None = None) -> list[dict[str, str]]:
    """A harness that runs the schedule in order: one call a minute, every third fails."""
    rows = schedule_of(source) if rows is None else rows
    log = []
    for i, row in enumerate(rows):
        call_id = f"c{i:04d}"
        log.append({
            "run_id": "ab", "block_id": row["block"], "service": row["service"], "service_group": "direct",
            "requested_model": "unknown", "returned_model": "unknown",
            "started_at": (START + timedelta(minutes=i)).isoformat(), "request_hash": request_hash(REQUEST),
            "status": "ok", "finish_reason": "stop", "latency_ms": "1000",
            "qualified": "false" if i % 3 == 0 else "true", "failure_reason": "", "artifact_path": "",
            "call_id": call_id, "grade_reason": "", "task_id": row["task"], "repetition": row["repetition"],
        })
    return log


def write_log(source: Path, log: list[dict[str, str]]) -> None:
    folder = source / "experiments" / "ab"
    (folder / "requests").mkdir(exist_ok=True)
    (folder / "requests" / f"{request_hash(REQUEST)[7:]}.json").write_text(json.dumps(REQUEST), encoding="utf-8")
    with (folder / "calls.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS + ["task_id", "repetition"], lineterminator="\n")
        writer.writeheader()
        writer.writerows(log)


def schedule_codes(source: Path) -> list[str]:
    audited = audit_source(load_source(source))
    return sorted(f.code for a in audited for f in a.findings if f.code.startswith("schedule-"))


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return planned_source(tmp_path)


def test_a_log_that_follows_the_schedule_has_no_schedule_finding(source: Path) -> None:
    write_log(source, follow(source))
    assert schedule_codes(source) == []
    contract = load_source(source).runs[0].contract
    assert contract.plan is not None and contract.schedule is not None
    assert contract.plan.schedule_sha256 == contract.schedule.sha256
    assert contract.plan.calls_per_service * 2 == len(contract.schedule.rows)


def test_a_dropped_call_is_missing_from_the_log(source: Path) -> None:
    log = follow(source)
    del log[5]
    write_log(source, log)
    assert schedule_codes(source) == ["schedule-missing"]


def test_an_added_call_is_not_in_the_schedule(source: Path) -> None:
    log = follow(source)
    extra = dict(log[-1], call_id="extra", repetition="999",
                 started_at=(START + timedelta(minutes=len(log))).isoformat())
    write_log(source, log + [extra])
    assert schedule_codes(source) == ["schedule-extra"]


def test_a_call_run_in_another_block_changes_the_block_sizes(source: Path) -> None:
    log = follow(source)
    last_of_block_1 = max(i for i, row in enumerate(log) if row["block_id"] == "1")
    log[last_of_block_1]["block_id"] = "2"
    write_log(source, log)
    assert schedule_codes(source) == ["schedule-block-size"]


def test_a_different_service_order_within_a_block(source: Path) -> None:
    log = follow(source)
    i = next(i for i in range(len(log) - 1) if log[i]["service"] != log[i + 1]["service"]
             and log[i]["block_id"] == log[i + 1]["block_id"])
    log[i]["started_at"], log[i + 1]["started_at"] = log[i + 1]["started_at"], log[i]["started_at"]
    write_log(source, log)
    codes = schedule_codes(source)
    assert codes == ["schedule-order"]
    finding = next(f for a in audit_source(load_source(source)) for f in a.findings if f.code == "schedule-order")
    assert f"block {log[i]['block_id']}" in finding.message


def test_a_schedule_changed_after_the_plan_is_reported(source: Path) -> None:
    rows = schedule_of(source)
    write_log(source, follow(source, rows))
    path = source / "experiments" / "ab" / "schedule.csv"
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # same calls, other bytes
    assert schedule_codes(source) == ["schedule-changed"]


def _write_paired_log(source: Path, log: list[dict[str, str]]) -> None:
    folder = source / "experiments" / "ab"
    (folder / "requests").mkdir(exist_ok=True)
    (folder / "requests" / f"{request_hash(REQUEST)[7:]}.json").write_text(json.dumps(REQUEST), encoding="utf-8")
    with (folder / "calls.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS + ["pair_id", "repetition"], lineterminator="\n")
        writer.writeheader()
        writer.writerows(log)


def test_a_paired_schedule_is_matched_by_pair(tmp_path: Path) -> None:
    source = tmp_path / "source"
    (source / "experiments").mkdir(parents=True)
    (source / "reportgen.toml").write_text('title = "P"\nversion = "v1"\n', encoding="utf-8")
    made = make_plan(PlanRequest("paired", 0.3, discordant_rate=0.5, blocks=2))
    write_plan(made, source / "experiments" / "ab", registered_at=REGISTERED)
    log = follow(source)
    for row in log:
        row["pair_id"] = row.pop("task_id")
    _write_paired_log(source, log)
    assert schedule_codes(source) == []
    # One call run on a pair the schedule does not have, instead of its own: one missing, one extra.
    log[0]["pair_id"] = "pair-x"
    _write_paired_log(source, log)
    assert schedule_codes(source) == ["schedule-extra", "schedule-missing"]


def _more_planned(text: str) -> str:
    n = int(text.split("planned_calls = ")[1].split("\n")[0])
    return text.replace(f"planned_calls = {n}\n", f"planned_calls = {n + 2}\n")


@pytest.mark.parametrize("edit, field", [
    (lambda t: t.replace("alpha = 0.05\nalpha_per_comparison", "alpha = 0.01\nalpha_per_comparison"), "plan.alpha"),
    (lambda t: t.replace('[plan]\ndesign = "independent"', '[plan]\ndesign = "paired"'), "plan.design"),
    (lambda t: t.replace("power = 0.8\n", "power = 1.5\n"), "plan.power"),
    (_more_planned, "plan.calls_per_service"),
])
def test_the_contract_reader_validates_the_plan_table(source: Path, edit, field: str) -> None:
    write_log(source, follow(source))
    contract = source / "experiments" / "ab" / "run.toml"
    contract.write_text(edit(contract.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_source(source)
    problem = next((p for p in caught.value.problems if p.field == field), None)
    assert problem is not None, caught.value.problems
    assert problem.line > 0 and str(problem).startswith("experiments/ab/run.toml:")


def test_a_bad_schedule_row_is_one_problem_with_its_line(source: Path) -> None:
    write_log(source, follow(source))
    path = source / "experiments" / "ab" / "schedule.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace("candidate", "nobody").replace("baseline", "nobody")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_source(source)
    assert [str(p) for p in caught.value.problems] == [
        "experiments/ab/schedule.csv:4: service: 'nobody' is not a [[service]] id of the contract"]


def test_a_registered_schedule_that_is_not_there(source: Path) -> None:
    write_log(source, follow(source))
    (source / "experiments" / "ab" / "schedule.csv").unlink()
    assert schedule_codes(source) == ["schedule-absent"]
