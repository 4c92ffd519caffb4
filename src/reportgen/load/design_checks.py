"""The columns a design needs, checked row by row after the generic checks.

A paired design matches baseline and candidate rows by ``pair_id``; a repeated design
groups by ``task_id`` with ``repetition`` inside each task; a score metric needs a
number for every complete return. Each problem names file, line and field.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from reportgen.errors import Collector
from reportgen.model.config import SAFE_ID, RunContract

if TYPE_CHECKING:
    from reportgen.model.calls import Call


def check_design(contract: RunContract, calls: Sequence[Call], log_file: str, problems: Collector) -> None:
    for call in calls:
        name = call.column("slice")
        if name and not SAFE_ID.match(name):
            problems.add(log_file, call.line, "slice", f"{name!r} is not a usable slice name (letters, digits, "
                         "'.', '_', '-'; it names claims and anchors)")
    if contract.metric.scored:
        _check_scores(calls, log_file, problems)
    if contract.design == "paired":
        _check_unique(calls, ("pair_id",), "a paired design matches the two services' rows by pair_id "
                      "(a seed, split or task)", log_file, problems)
    elif contract.design == "repeated":
        for call in calls:
            text = call.column("repetition")
            if text and not (text.isdigit() and int(text) >= 1):
                problems.add(log_file, call.line, "repetition", f"{text!r} is not a positive whole number")
        _check_unique(calls, ("task_id", "repetition"), "a repeated design groups rows by task_id, "
                      "with repetition numbering the runs of one task", log_file, problems)


def _check_scores(calls: Sequence[Call], log_file: str, problems: Collector) -> None:
    for call in calls:
        text = call.column("score")
        if text:
            try:
                value = float(text)
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                problems.add(log_file, call.line, "score", f"{text!r} is not a finite number")
        elif call.status == "ok" and not call.disputed and call.phase == "formal":
            problems.add(log_file, call.line, "score", "a complete return needs a score "
                         "(run.primary_metric is 'score')")


def _check_unique(calls: Sequence[Call], columns: tuple[str, ...], why: str, log_file: str,
                  problems: Collector) -> None:
    seen: dict[tuple[str, ...], int] = {}
    for call in [c for c in calls if c.counted]:
        key = tuple(call.column(c) for c in columns)
        missing = [c for c, v in zip(columns, key) if not v]
        if missing:
            problems.add(log_file, call.line, missing[0], f"required: {why}")
            continue
        other = seen.setdefault((call.service, *key), call.line)
        if other != call.line:
            label = ", ".join(f"{c} {v!r}" for c, v in zip(columns, key))
            problems.add(log_file, call.line, columns[-1], f"{call.service} already has a first "
                         f"submission with {label} (line {other}); each unit is run once per service")
