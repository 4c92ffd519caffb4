"""The tables an imported run's contract carries: ``[harness]`` (the harness's own number
and its rule, shown beside the headline) and ``run.partial_credit`` (what a call graded
partial credit scores under a score metric)."""

from __future__ import annotations

import math
from collections.abc import Callable
from types import MappingProxyType
from typing import Any, Protocol

from reportgen.errors import Collector
from reportgen.model.config import HarnessReported, _line_of


class Reader(Protocol):
    """What these readers use of the contract reader: a table's values, and where to
    report a problem."""

    problems: Collector
    rel: str
    text: str

    def get(self, key: str, default: Any = None) -> Any: ...
    def bad(self, key: str, message: Any) -> None: ...


def partial_credit_of(run: Reader, metric: str) -> float | None:
    """``partial_credit``: what a call graded partial credit scores (0 to 1), under a score."""
    value = run.get("partial_credit")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        run.bad("partial_credit", f"must be a number from 0 to 1 (the score a partial grade earns), got {value!r}")
        return None
    if metric != "score":
        run.bad("partial_credit", "needs primary_metric = \"score\": under a pass rate a partial grade is a "
                "non-pass (remove partial_credit, or score the run)")
        return None
    return float(value)


def harness_table(top: Reader, service_ids: list[str]) -> HarnessReported | None:
    """``[harness]``: name, metric and rule (strings), value = {service = number} and
    optionally version and scorer = {service = name}; None when absent."""
    table = top.get("harness")
    if table is None:
        return None

    def bad(key: str, message: str) -> None:
        top.problems.add(top.rel, _line_of(top.text, key, "[harness]"), f"harness.{key}", message)

    if not isinstance(table, dict):
        bad("harness", "must be a table: name, metric, rule, value = {service = number}")
        return None
    texts = {}
    for key in ("name", "metric", "rule", "version"):
        value = table.get(key, "" if key == "version" else None)
        if not isinstance(value, str) or (key != "version" and not value.strip()):
            bad(key, "required: a non-empty string" if value is None else f"must be a string, got {value!r}")
            value = ""
        texts[key] = value
    values = _per_service(table, "value", lambda v: not isinstance(v, bool) and isinstance(v, (int, float))
                          and math.isfinite(v), "a finite number", service_ids, bad)
    scorers = _per_service(table, "scorer", lambda v: isinstance(v, str) and v, "a scorer's name", service_ids, bad)
    if not all(texts[k] for k in ("name", "metric", "rule")):
        return None
    return HarnessReported(texts["name"], texts["metric"], texts["rule"],
                           MappingProxyType({k: float(v) for k, v in values.items()}), texts["version"],
                           MappingProxyType({k: str(v) for k, v in scorers.items()}))


def _per_service(table: dict[str, Any], key: str, ok: Callable[[Any], Any], what: str, service_ids: list[str],
                 bad: Callable[[str, str], None]) -> dict[str, Any]:
    """``key = {service = value}`` in [harness]: each service known and each value ``ok``
    (``value`` is required, ``scorer`` is not)."""
    entries = table.get(key, {} if key == "scorer" else None)
    if not isinstance(entries, dict):
        bad(key, f"required: a table {{service = {what}}}")
        return {}
    found = {}
    for sid, item in entries.items():
        if sid not in service_ids:
            bad(key, f"{sid!r} is not a [[service]] id (known: {', '.join(service_ids) or 'none'})")
        elif not ok(item):
            bad(key, f"{sid}: must be {what}, got {item!r}")
        else:
            found[sid] = item
    return found
