"""The contract's ``[plan]`` table and the run's ``schedule.csv``, checked.

A ``[plan]`` table sizes the test the report runs: its design, metric and alpha must be
the run's, and its calls per service the run's planned calls. A schedule lists every
planned call (block, slot, service, task, repetition); the audit holds the log to it.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from reportgen.errors import Collector
from reportgen.model.plan import RegisteredPlan, Schedule, ScheduledCall

SCHEDULE_COLUMNS = ("block", "slot", "service", "task", "repetition")
PLAN_DESIGNS = ("independent", "leaderboard", "paired", "repeated")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# key -> (required, check, what a good value is)
_CHECKS: dict[str, tuple[bool, Any, str]] = {
    "design": (True, lambda v: v in PLAN_DESIGNS, f"one of {', '.join(PLAN_DESIGNS)}"),
    "metric": (True, lambda v: v in ("first_pass_rate", "score"), "'first_pass_rate' or 'score'"),
    "test": (True, lambda v: isinstance(v, str) and v.strip(), "the name of the test planned for"),
    "method": (True, lambda v: isinstance(v, str) and v.strip(), "how the power was computed, in words"),
    "alpha": (True, lambda v: _number(v) and 0 < v <= 0.5, "a number in (0, 0.5]"),
    "alpha_per_comparison": (False, lambda v: _number(v) and 0 < v <= 0.5, "a number in (0, 0.5]"),
    "power": (True, lambda v: _number(v) and 0 < v < 1, "the power wanted, between 0 and 1"),
    "achieved_power": (False, lambda v: _number(v) and 0 <= v <= 1, "a power between 0 and 1"),
    "size": (True, lambda v: _int(v) and v >= 1, "a positive integer"),
    "calls_per_service": (True, lambda v: _int(v) and v >= 1, "a positive integer"),
    "baseline_rate": (False, lambda v: _number(v) and 0 < v < 1, "a rate between 0 and 1"),
    "discordant_rate": (False, lambda v: _number(v) and 0 < v < 1, "a rate between 0 and 1"),
    "sd": (False, lambda v: _number(v) and v > 0, "a positive number"),
    "min_useful_effect": (False, lambda v: _number(v) and v > 0, "a positive number"),
    "noninferiority_margin": (False, lambda v: _number(v) and v > 0, "a positive number (the largest loss)"),
    "assumptions": (False, lambda v: isinstance(v, list) and all(isinstance(a, str) for a in v),
                    "a list of sentences"),
    "schedule_seed": (False, lambda v: _int(v) and v >= 0, "a non-negative integer"),
    "schedule_sha256": (False, lambda v: isinstance(v, str) and DIGEST.match(v), "sha256:<64 hex digits>"),
    "schedule": (False, lambda v: v == "schedule.csv", "\"schedule.csv\" (beside run.toml)"),
}


def read_plan(raw: Any, run: Mapping[str, Any], rel: str, line_of: Any,
              problems: Collector) -> RegisteredPlan | None:
    """The ``[plan]`` table as a RegisteredPlan; None (each problem reported) when absent or bad.
    ``run``: the contract's [run] table (the plan must agree with it)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problems.add(rel, line_of("plan", ""), "plan", "must be a table ([plan])")
        return None
    bad = 0
    for key, (required, ok, what) in _CHECKS.items():
        value = raw.get(key)
        if value is None and not required:
            continue
        if value is None or not ok(value):
            problems.add(rel, line_of(key, "[plan]"), f"plan.{key}",
                         f"{'required: ' if value is None else ''}must be {what}"
                         + ("" if value is None else f", got {value!r}"))
            bad += 1
    if bad:
        return None
    bad += _agrees(raw, run, rel, line_of, problems)
    if bad:
        return None
    g = raw.get
    return RegisteredPlan(
        design=raw["design"], metric=raw["metric"], test=raw["test"], method=raw["method"],
        alpha=float(raw["alpha"]), alpha_per_comparison=float(raw.get("alpha_per_comparison") or raw["alpha"]),
        power=float(raw["power"]), achieved_power=_float(g("achieved_power")), size=raw["size"],
        calls_per_service=raw["calls_per_service"],
        baseline_rate=_float(g("baseline_rate")), min_useful_effect=_float(g("min_useful_effect")),
        discordant_rate=_float(g("discordant_rate")), sd=_float(g("sd")), schedule_seed=g("schedule_seed"),
        schedule_sha256=g("schedule_sha256"), raw=MappingProxyType(dict(raw)))


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _agrees(raw: Mapping[str, Any], run: Mapping[str, Any], rel: str, line_of: Any, problems: Collector) -> int:
    """Problems where the plan sized another test than the run registers."""
    bad = 0
    if run.get("design") is not None and raw["design"] != run.get("design"):
        problems.add(rel, line_of("design", "[plan]"), "plan.design",
                     f"the plan sized a {raw['design']} design, but run.design is {run.get('design')!r}")
        bad += 1
    metric = run.get("primary_metric", "first_pass_rate")
    if raw["metric"] != metric:
        problems.add(rel, line_of("metric", "[plan]"), "plan.metric",
                     f"the plan sized {raw['metric']!r}, but run.primary_metric is {metric!r}")
        bad += 1
    alpha = run.get("alpha", 0.05)
    if _number(alpha) and abs(float(alpha) - raw["alpha"]) > 1e-12:
        problems.add(rel, line_of("alpha", "[plan]"), "plan.alpha",
                     f"{raw['alpha']:g} differs from run.alpha {alpha:g}: the plan must size the test the report runs")
        bad += 1
    planned = run.get("planned_calls")
    counts = planned.values() if isinstance(planned, dict) else [planned]
    if any(_int(n) and n != raw["calls_per_service"] for n in counts):
        problems.add(rel, line_of("calls_per_service", "[plan]"), "plan.calls_per_service",
                     f"{raw['calls_per_service']} calls per service were planned, but run.planned_calls registers "
                     f"{', '.join(str(n) for n in counts)}")
        bad += 1
    return bad


def read_schedule(folder: Path, rel_folder: str, services: list[str], problems: Collector) -> Schedule | None:
    """``schedule.csv`` of a run folder; None when there is none (or it has problems, reported)."""
    path = folder / "schedule.csv"
    if not path.is_file():
        return None
    rel = f"{rel_folder}/schedule.csv"
    try:
        data = path.read_bytes()
        text = data.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        problems.add(rel, 0, "", f"cannot be read: {exc}")
        return None
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None or tuple(h.strip() for h in header[:5]) != SCHEDULE_COLUMNS:
        problems.add(rel, 1, "", f"the header must be {','.join(SCHEDULE_COLUMNS)}")
        return None
    rows = _schedule_rows(reader, rel, set(services), problems)
    if rows is None:
        return None
    return Schedule(rel, rows, "sha256:" + hashlib.sha256(data).hexdigest(), data)


def _schedule_rows(reader: Any, rel: str, services: set[str], problems: Collector) -> tuple[ScheduledCall, ...] | None:
    rows: list[ScheduledCall] = []
    seen: set[tuple[str, int]] = set()
    bad = 0
    for line, values in enumerate(reader, 2):
        if not values or all(not v.strip() for v in values):
            continue
        cells = [v.strip() for v in values] + [""] * (5 - len(values))
        block, slot, service, task, repetition = cells[:5]
        if not block or not slot.isdigit() or int(slot) < 1:
            problems.add(rel, line, "slot" if block else "block",
                         "every row needs a block and a slot (a positive integer)")
            bad += 1
            continue
        if service not in services:
            problems.add(rel, line, "service", f"{service!r} is not a [[service]] id of the contract")
            bad += 1
            continue
        if (block, int(slot)) in seen:
            problems.add(rel, line, "slot", f"block {block} has slot {slot} twice")
            bad += 1
            continue
        seen.add((block, int(slot)))
        rows.append(ScheduledCall(line, block, int(slot), service, task, repetition))
    return None if bad else tuple(rows)
