"""What an imported contract says in words: the question, the harness's own number and
rule (``[harness]``), the partial-credit choice, and what the latency column measures."""

from __future__ import annotations

import math
from collections.abc import Callable

from reportgen.importers.assemble import ImportedRun

NAMES = {"inspect": "Inspect", "lm-eval": "lm-eval", "helm": "HELM"}
# What the harness calls what graded a sample.
GRADER = {"inspect": "scorer"}
# What the latency_ms column holds, per harness, when it is not the model call alone.
LATENCY = {"inspect": ("Inspect's total_time of the sample: the model's calls and the scoring (grading) together, "
                       "not the model's response time alone")}


def harness_name(harness: str) -> str:
    return NAMES.get(harness, harness)


def question(run: ImportedRun) -> str:
    """"Accuracy of gpt-4o-mini on popularity (Inspect, scorer match)"; a comparison names
    the candidate and the baseline."""
    first = run.services[0].log
    if run.kind == "score":
        quantity = "Mean score"
    else:
        quantity = "Accuracy" if first.headline == "accuracy" or first.harness == "inspect" else "Pass rate"
    grader = GRADER.get(first.harness, "metric")
    scorers = sorted({s.log.metric for s in run.services})
    graded = (f"{grader} {scorers[0]}" if len(scorers) == 1 else
              ", ".join(f"{grader} {s.log.metric} for {s.id}" for s in run.services))
    how = f"({harness_name(first.harness)}, {graded})"
    if not run.candidates:
        return f"{quantity} of {run.services[0].id} on {run.task} {how}"
    if len(run.candidates) == 1:
        return f"{quantity} of {run.candidates[0]} compared with {run.baseline} on {run.task} {how}"
    return f"{quantity} of {len(run.services)} models on {run.task}, each compared with {run.baseline} {how}"


def harness_lines(run: ImportedRun, key: Callable[[str], str], toml: Callable[[object], str | None]) -> list[str]:
    """``[harness]``: the harness's headline number per service and how it counts a sample;
    none when no log reports one."""
    first = run.services[0].log
    metric = next((s.log.headline for s in run.services if s.log.headline), "")
    if not metric:
        return []
    values = [(s.id, s.log.aggregate[metric]) for s in run.services
              if s.log.headline == metric and math.isfinite(s.log.aggregate[metric])]
    if not values:
        return []
    rule = next(s.log.rule for s in run.services if s.log.headline == metric)
    lines = ["", "# The harness's own number for each service, as its log reports it, and how it counts a sample.",
             "[harness]", f"name = {toml(harness_name(first.harness))}",
             f"version = {toml(first.harness_version)}",
             f"metric = {toml(metric.removesuffix(',none'))}",  # lm-eval's key names its filter: "none" says nothing
             f"rule = {toml(rule)}",
             "value = {" + ", ".join(f"{key(sid)} = {toml(v)}" for sid, v in values) + "}"]
    if first.harness in GRADER:  # the scorer each service's log was graded by
        lines.append("scorer = {" + ", ".join(f"{key(s.id)} = {toml(s.log.metric)}" for s in run.services) + "}")
    return lines


def partial_choice(run: ImportedRun) -> list[str]:
    """The choice a log graded with partial credit offers: the harness's rule, as comments
    under primary_metric, so that a user can register it before building."""
    if run.kind != "pass" or not any(c.sample.partial for c in run.calls):
        return []
    name = harness_name(run.services[0].log.harness)
    return [f"# {name} counts partial credit (P) as ½ in its accuracy; this contract counts it as a non-pass.",
            "# To score as it does, replace the line above with: primary_metric = \"score\"",
            "# and add: partial_credit = 0.5   (each P then scores 0.5, a pass 1, any other grade 0)"]


def column_notes(run: ImportedRun) -> dict[str, str]:
    """What the harness-specific columns hold (latency, partial), for [environment.columns]."""
    notes = {}
    harness = run.services[0].log.harness
    if harness in LATENCY and any(c.sample.latency_ms is not None for c in run.calls):
        notes["latency_ms"] = LATENCY[harness]
    if any(c.sample.partial for c in run.calls):
        notes["partial"] = (f"true when {harness_name(harness)} graded the sample partial credit (P): a non-pass; "
                            "under primary_metric = \"score\" it scores run.partial_credit")
    return notes
