"""The contract's ``[grading]`` table, the run's ``grades/`` folder and the judge column
of its log -> ``Grading``; with ``primary = "human"`` the blind grades fill each graded
call's outcome, settled by the registered review rule.

The files are those ``reportgen grade`` writes: ``grades/key.csv`` (item -> call),
``grades/sample.json`` (how the items were drawn), ``grades/<grader>.csv`` (one row per
item: item, grade, reason, graded_at, rule_version) and ``grades/<grader>.order.json``.
Every problem is one line naming the file, the line and the field.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, cast

from reportgen.errors import Collector
from reportgen.model.calls import Call
from reportgen.model.config import RunContract, parse_timestamp
from reportgen.model.grading import (
    GRADER_NAME,
    GRADES,
    GRADES_HEADER,
    ITEM_ID,
    KEY_HEADER,
    PRIMARIES,
    REVIEWS,
    BlindGrades,
    CallGrades,
    Grade,
    GradeRow,
    Grading,
    GradingRules,
    Primary,
    Review,
)
from reportgen.model.source import RawLog

JUDGE_VALUES = {"pass": True, "fail": False}


def load_grading(contract: RunContract, log: RawLog, calls: Sequence[Call], files: Mapping[str, bytes],
                 rel_folder: str, problems: Collector) -> tuple[Grading, list[Call]]:
    """The run's grading, and its calls with their blind grades attached (and, when
    human grading is primary, their outcomes filled from them)."""
    rules = read_rules(contract, log, problems)
    judge = read_judge(rules, log, calls, problems)
    blind = read_blind_grades(files, f"{rel_folder}/grades", calls, rules.review, problems)
    if rules.primary == "human" and contract.metric.scored:
        # A blind grade says pass or fail; a score run's outcome is each call's score,
        # which the grades would leave as logged while they changed what the call reads.
        problems.add(f"{rel_folder}/run.toml", contract.line_of("primary", "[grading]"), "grading.primary",
                     'is "human" but the run is scored (primary_metric = "score"): blind grades say pass or '
                     'fail and cannot settle a score; write primary = "logged" (the grades are then compared '
                     "with the logged ones)")
    elif blind is None and rules.primary == "human":
        problems.add(f"{rel_folder}/run.toml", contract.line_of("primary", "[grading]"), "grading.primary",
                     'is "human" but the run has no grades/ folder: grade it with reportgen grade, '
                     'or write primary = "logged"')
    joined = list(calls) if blind is None else [_joined(c, blind.by_call.get(c.call_id), rules.primary)
                                                 for c in calls]
    return Grading(rules, blind, judge), joined


def read_rules(contract: RunContract, log: RawLog, problems: Collector) -> GradingRules:
    table = contract.raw.get("grading")
    rel = f"{log.file.rsplit('/', 1)[0]}/run.toml"
    if table is None:
        return GradingRules()

    def bad(key: str, message: str) -> None:
        problems.add(rel, contract.line_of(key, "[grading]"), f"grading.{key}", message)

    if not isinstance(table, Mapping):
        bad("grading", "must be a table: primary, review, judge_column")
        return GradingRules()
    for key in sorted(set(table) - {"primary", "review", "judge_column"}):
        bad(key, "unknown key: [grading] takes primary, review and judge_column")
    primary, review = table.get("primary", "logged"), table.get("review", "majority")
    if primary not in PRIMARIES:
        bad("primary", f'{primary!r} is not "logged" or "human"')
        primary = "logged"
    if review not in REVIEWS:
        bad("review", f'{review!r} is not one of "third-grader", "majority", "disputed"')
        review = "majority"
    column = table.get("judge_column")
    if column is not None and (not isinstance(column, str) or column not in log.columns):
        bad("judge_column", f"{column!r} is not a column of {log.name}")
        column = None
    return GradingRules(cast(Primary, primary), cast(Review, review), column)


def read_judge(rules: GradingRules, log: RawLog, calls: Sequence[Call], problems: Collector
               ) -> Mapping[str, bool] | None:
    """The judge's pass/fail of each call that has one (empty: not judged)."""
    column = rules.judge_column
    if column is None:
        return None
    judged = {}
    for call in calls:
        value = call.column(column).lower()
        if value in JUDGE_VALUES:
            judged[call.call_id] = JUDGE_VALUES[value]
        elif value:
            problems.add(log.file, call.line, column,
                         f"{call.column(column)!r} is not a judge's grade: write pass, fail or leave it empty")
    return MappingProxyType(judged)


def read_blind_grades(files: Mapping[str, bytes], folder: str, calls: Sequence[Call], review: Review,
                      problems: Collector) -> BlindGrades | None:
    """The grades folder, checked against the log; None when the run has none."""
    # By name first: the run's files are read lazily, and a large run holds a hundred thousand.
    mine = {name.removeprefix("grades/"): files[name] for name in files
            if name.startswith("grades/") and "/" not in name.removeprefix("grades/")}
    if not mine:
        return None
    n_before = len(problems.problems)
    call_ids = {c.call_id for c in calls}
    key = _read_key(mine.get("key.csv"), f"{folder}/key.csv", call_ids, problems)
    sample = _read_sample(mine.get("sample.json"), f"{folder}/sample.json", problems)
    rows: list[GradeRow] = []
    graders = []
    for name in sorted(mine):
        if not name.endswith(".csv") or name == "key.csv":
            continue
        grader = name.removesuffix(".csv")
        if not GRADER_NAME.fullmatch(grader):
            problems.add(f"{folder}/{name}", 0, "", "a grader's name is 1 to 40 letters, digits, _ or -")
            continue
        graders.append(grader)
        rows += _read_grader(mine[name], grader, f"{folder}/{name}", key, problems)
    if len(problems.problems) != n_before:
        return None
    by_call = _by_call(rows, key, review)
    kept = {name: data for name, data in sorted(mine.items()) if name in ("key.csv", "sample.json")
            or name.endswith(".order.json") or name.removesuffix(".csv") in graders}
    return BlindGrades(folder, MappingProxyType(key), MappingProxyType(sample), tuple(graders), tuple(rows),
                       MappingProxyType(by_call), MappingProxyType(kept))


def _csv_rows(data: bytes, file: str, header: tuple[str, ...], problems: Collector
              ) -> list[tuple[int, list[str]]]:
    """(line, fields) of each data row; the header checked."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        problems.add(file, 0, "", "not UTF-8 text")
        return []
    reader = csv.reader(io.StringIO(text, newline=""))
    out = []
    start, first = 1, True
    try:
        for fields in reader:
            if first:
                first = False
                if tuple(f.strip() for f in fields) != header:
                    problems.add(file, 1, "", f"header must be {','.join(header)}")
                    return []
            elif any(f.strip() for f in fields):
                if len(fields) != len(header):
                    problems.add(file, start, "", f"{len(fields)} fields; expected {len(header)} ({','.join(header)})")
                else:
                    out.append((start, fields))
            start = reader.line_num + 1
    except csv.Error as exc:
        problems.add(file, reader.line_num, "", f"not valid CSV: {exc}")
    if first:
        problems.add(file, 1, "", f"empty: the first line must be the header {','.join(header)}")
    return out


def _read_key(data: bytes | None, file: str, call_ids: set[str], problems: Collector) -> dict[str, str]:
    if data is None:
        problems.add(file, 0, "", "missing: the grades folder needs key.csv (item,call_id) to join grades to calls")
        return {}
    key: dict[str, str] = {}
    seen_calls: dict[str, int] = {}
    for line, (item, call_id) in _csv_rows(data, file, KEY_HEADER, problems):
        item, call_id = item.strip(), call_id.strip()
        if not ITEM_ID.fullmatch(item):
            problems.add(file, line, "item", f"{item!r} is not an item id (12 lowercase hex characters)")
        elif item in key:
            problems.add(file, line, "item", f"{item!r} is listed twice")
        elif call_id not in call_ids:
            problems.add(file, line, "call_id", f"{call_id!r} is not a call of the log")
        elif call_id in seen_calls:
            problems.add(file, line, "call_id", f"{call_id!r} already has an item (line {seen_calls[call_id]})")
        else:
            key[item] = call_id
            seen_calls[call_id] = line
    return key


def _read_sample(data: bytes | None, file: str, problems: Collector) -> dict[str, Any]:
    if data is None:
        return {}
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        problems.add(file, 0, "", f"not valid JSON: {exc}")
        return {}
    if not isinstance(body, dict):
        problems.add(file, 0, "", "must be a JSON object: seed, sample, stratified_by, items, created_at")
        return {}
    sample = body.get("sample")
    if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int) or sample < 1):
        problems.add(file, 0, "sample", f"must be a positive integer or null, got {sample!r}")
    return body


def _read_grader(data: bytes, grader: str, file: str, key: Mapping[str, str], problems: Collector) -> list[GradeRow]:
    rows = []
    first_line: dict[str, int] = {}
    for line, fields in _csv_rows(data, file, GRADES_HEADER, problems):
        item, grade, reason, graded_at, version = (f.strip() for f in fields)
        when = parse_timestamp(graded_at)
        if item not in key:
            problems.add(file, line, "item", f"unknown item {item!r}: not in grades/key.csv")
        elif item in first_line:
            problems.add(file, line, "item", f"{item!r} graded twice by {grader} (first at line {first_line[item]})")
        elif grade not in GRADES:
            problems.add(file, line, "grade", f"{grade!r} is not pass, fail or disputed")
        elif when is None:
            problems.add(file, line, "graded_at", f"{graded_at!r} is not an ISO 8601 time with a UTC offset")
        else:
            first_line[item] = line
            rows.append(GradeRow(grader, item, grade, fields[2], when, graded_at, version, file, line))
            continue
        first_line.setdefault(item, line)
    return rows


def _by_call(rows: list[GradeRow], key: Mapping[str, str], review: Review) -> dict[str, CallGrades]:
    by_item: dict[str, list[GradeRow]] = {}
    for row in rows:
        by_item.setdefault(row.item, []).append(row)
    out = {}
    for item, given in by_item.items():
        ordered = tuple(sorted(given, key=lambda r: (r.graded_at, r.grader)))
        resolved, how = resolve(ordered, review)
        out[key[item]] = CallGrades(item, ordered, resolved, how)
    return out


def resolve(grades: Sequence[GradeRow], review: Review) -> tuple[Grade | None, str]:
    """One call's grade from its graders' (in the order given), by the review rule."""
    if not grades:
        return None, "not graded"
    values = [g.grade for g in grades]
    if len(values) == 1:
        return values[0], f"one grader ({grades[0].grader})"
    if len(set(values)) == 1:
        return values[0], f"all {len(values)} graders agree"
    if review == "disputed":
        return "disputed", "the graders disagree: disputed under the registered review rule"
    if review == "majority":
        (top, n_top), *rest = Counter(values).most_common()
        if n_top * 2 > len(values):
            return top, f"majority: {n_top} of {len(values)} graders"
        return "disputed", f"no majority among {len(values)} graders: disputed"
    if values[0] == values[1]:
        return values[0], f"the first two graders agree ({grades[0].grader}, {grades[1].grader})"
    if len(values) >= 3:
        return values[2], f"the first two graders disagree; the third ({grades[2].grader}) settles it"
    return "disputed", "the first two graders disagree and no third grade was given: disputed"


def _joined(call: Call, grades: CallGrades | None, primary: Primary) -> Call:
    if grades is None:
        return call
    if primary != "human" or call.status != "ok" or grades.resolved is None:
        return dataclasses.replace(call, grades=grades)
    grades = dataclasses.replace(grades, fills_outcome=True)
    return dataclasses.replace(call, grades=grades, qualified=grades.resolved == "pass",
                               disputed=grades.resolved == "disputed")
