"""The audit of a run's blind grades and its judge: grades given under another version of
the grading rule than the contract's (error), grades given before the call they grade
was made (warning), and a judge no blind human grade calibrates (warning).

A grades file that names an unknown item or grades an item twice, a key that names a
call the log does not have, and a judge value other than pass/fail are refused when the
run is loaded (see ``load.grades``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from reportgen.model.calls import Call
from reportgen.model.findings import Finding, some_ids
from reportgen.model.grading import GradeRow
from reportgen.model.source import ValidatedRun
from reportgen.model.numbers import counted


def grading_findings(run: ValidatedRun, _: Any = None) -> Iterable[Finding]:
    blind = run.grading.blind
    if blind is None:
        if run.grading.judge:
            yield Finding(
                "judge-uncalibrated", "warning", f"{run.rel_folder}/run.toml",
                run.contract.line_of("judge_column", "[grading]"), "grading.judge_column",
                f"the judge's grades ({run.grading.rules.judge_column}) are not calibrated: no blind human grades "
                "(grades/ folder) measure how often it errs on each service", scope="comparison",
                summary="the judge's grades are not calibrated against blind human grades")
        return
    calls = {c.call_id: c for c in run.calls}
    versions = _rule_versions(run.contract.tasks)
    by_file: dict[str, list[tuple[GradeRow, Call]]] = {}
    early: list[tuple[GradeRow, Call]] = []
    for row in blind.rows:
        call = calls[blind.key[row.item]]
        expected = _expected(versions, call)
        if expected is not None and row.rule_version != expected:
            by_file.setdefault(row.file, []).append((row, call))
        if row.graded_at < call.started_at:
            early.append((row, call))
    for file, rows in sorted(by_file.items()):
        first, call = rows[0]
        yield Finding(
            "grade-rule-version", "error", file, first.line, "rule_version",
            f"{counted(len(rows), 'grade')} given under grading rule version "
            f"{first.rule_version!r}, but the contract registers version {_expected(versions, call)!r}: "
            "grade them again under the registered rule", services=tuple(sorted({c.service for _, c in rows})),
            calls=tuple(c.call_id for _, c in rows), summary="grades given under another version of the grading rule")
    if early:
        row, call = early[0]
        ids = [c.call_id for _, c in early]
        yield Finding(
            "grade-before-call", "warning", row.file, row.line, "graded_at",
            f"{counted(len(early), 'grade')} given before the call itself was made "
            f"(first: {row.graded_at_text}, call {call.call_id} started {call.started_at_text}): {some_ids(ids)}; "
            "the key or the clocks are wrong", services=tuple(sorted({c.service for _, c in early})),
            calls=tuple(ids), summary="grades given before the call was made")


def _rule_versions(tasks: tuple[Mapping[str, Any], ...]) -> dict[str | None, str]:
    out: dict[str | None, str] = {}
    for task in tasks:
        version = task.get("grading_rule_version")
        if version is not None:
            out[str(task.get("id")) if task.get("id") is not None else None] = str(version)
    return out


def _expected(versions: Mapping[str | None, str], call: Call) -> str | None:
    """The rule version registered for the call's task (the only one, without task ids)."""
    task = call.column("task_id")
    if task and task in versions:
        return versions[task]
    return next(iter(versions.values())) if len(versions) == 1 else None
