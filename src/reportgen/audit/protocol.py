"""Protocol audit: the run checked against its own contract.

Each finding has a severity (error: cannot be published; warning: published, shown
beside the claims it weakens), a stable code, where it shows (file, line, field) and one
sentence a reader understands. ``claims`` names the claims it weakens, by id prefix rule.
"""

from __future__ import annotations

import dataclasses
import json
from bisect import bisect_right
from collections import Counter, defaultdict
from typing import Iterable, Mapping

from reportgen.audit.grading import grading_findings
from reportgen.audit.identical import identical_outputs
from reportgen.audit.model_identity import returned_model_findings
from reportgen.audit.schedule import schedule_findings
from reportgen.model.calls import Call
from reportgen.model.config import SPECIAL_VALUES, RunContract, allowed_attempts, parse_timestamp
from reportgen.model.findings import Finding
from reportgen.model.source import ValidatedRun
from reportgen.model.numbers import counted


def audit_run(run: ValidatedRun, artifact_hashes: Mapping[str, tuple[str, ...]],
              drawings: Mapping[str, str], graded: Mapping[str, tuple[str, int]],
              of_calls: tuple[Finding, ...] | None = None) -> tuple[Finding, ...]:
    """Every warning and error the run's data shows against its contract.

    ``artifact_hashes``: each call's files by sha256; ``drawings``: each call's drawing
    as ``load.artifacts.drawing_digest``; ``graded``: each call's graded output as
    ``load.artifacts.graded_outputs`` (a build and ``verify`` must pass the same).
    ``of_calls``: what ``call_findings`` found of this very run, when already known."""
    findings: list[Finding] = list(identical_outputs(run, artifact_hashes, drawings, graded))
    findings += call_findings(run) if of_calls is None else of_calls
    findings += _missing_requests(run, artifact_hashes)
    numbered = []
    counts: Counter[str] = Counter()
    # Ordered by where they show; findings of one code come from one check, in its order.
    for f in sorted(findings, key=lambda f: (f.severity != "error", f.file, f.line, f.code)):
        counts[f.code] += 1
        numbered.append(_with_id(f, f"{run.contract.id}.{f.code}.{counts[f.code]}"))
    return tuple(numbered)


def call_findings(run: ValidatedRun) -> tuple[Finding, ...]:
    """The findings (not numbered yet) of every check that reads only the run's contract,
    calls and grading, not its folder's files or request bodies: ``audit_run``'s checks
    but the identical outputs and the missing requests. Found of a large run while its
    folder is listed (see ``load.source.provisional_run``)."""
    return tuple(f for check in _CALL_CHECKS for f in check(run, None))


def _with_id(f: Finding, finding_id: str) -> Finding:
    return dataclasses.replace(f, id=finding_id)


def _formal_first(run: ValidatedRun) -> list[Call]:
    return [c for c in run.calls if c.first_submission]


def _plan(run: ValidatedRun, _) -> Iterable[Finding]:
    contract = run.contract
    by_service: dict[str, list[Call]] = defaultdict(list)  # once, not once per service
    for c in _formal_first(run):
        if not c.excluded:
            by_service[c.service].append(c)
    for service, planned in contract.planned_calls.items():
        mine = by_service[service]
        n = len(mine)
        if n < planned:
            yield Finding("calls-missing", "warning", run.log.file, 0, "service",
                          f"{service}: {n} of {planned} planned first submissions are in the log; the "
                          f"{planned - n} missing {_missing_count_as(contract, planned - n)} (dropped failures or a "
                          "run stopped early?)",
                          (service,))
        elif n > planned:
            yield Finding("calls-over-plan", "warning", run.log.file, mine[planned].line, "service",
                          f"{service}: {n} first submissions against {planned} planned; running on past the "
                          "plan (optional stopping) invalidates the error rates of the tests", (service,))
        if contract.blocks and planned % len(contract.blocks) == 0:
            per_block = planned // len(contract.blocks)
            for block in contract.blocks:
                got = sum(1 for c in mine if c.block_id == block)
                if got != per_block and n == planned:
                    yield Finding("block-unbalanced", "warning", run.log.file, 0, "block_id",
                                  f"{service}: block {block} has {counted(got, 'call')}, the plan has "
                                  f"{per_block} per block",
                                  (service,))


def _missing_count_as(contract: RunContract, n: int) -> str:
    """What ``n`` planned calls missing from the log count as, under the run's metric."""
    one = n == 1
    count, have, score = ("counts", "has", "scores") if one else ("count", "have", "score")
    if not contract.metric.scored:
        return f"{count} as {'a non-pass' if one else 'non-passes'}"
    if contract.failure_score is not None:
        return f"{count} as not complete and {score} {contract.failure_score:g} (the registered failure_score)"
    return f"{count} as not complete and {have} no score (no failure_score is registered)"


def _pilot(run: ValidatedRun, _) -> Iterable[Finding]:
    if run.contract.phase == "pilot":
        yield Finding("pilot-run", "warning", f"{run.rel_folder}/run.toml", run.contract.line_of("phase"), "run.phase",
                      "this run is registered as a pilot: its results are for tuning the procedure, not formal "
                      "conclusions", scope="run")
        return
    pilots = [c for c in run.calls if c.phase == "pilot"]
    if pilots:
        yield Finding("pilot-rows", "warning", run.log.file, pilots[0].line, "phase",
                      f"{len(pilots)} pilot rows are in the formal log; they are kept out of every statistic",
                      tuple(sorted({c.service for c in pilots})))


def _exclusions(run: ValidatedRun, _) -> Iterable[Finding]:
    rules = {r.strip().lower() for r in run.contract.exclusion_rules}
    for call in run.calls:
        if not call.excluded:
            continue
        reason = call.extra.get("exclusion_reason", "").strip()
        if reason.lower() not in rules:
            yield Finding("exclusion-not-registered", "error", run.log.file, call.line, "exclusion_reason",
                          f"call {call.call_id} is excluded for {reason or 'no stated reason'!r}, which is not one "
                          "of the contract's exclusion_rules; keep the call or register the rule before the run",
                          (call.service,), calls=(call.call_id,),
                          summary="excluded for a reason that is not one of the contract's exclusion_rules")
        else:
            yield Finding("excluded", "warning", run.log.file, call.line, "excluded",
                          f"call {call.call_id} is excluded under the registered rule {reason!r} and left out of "
                          "the denominators", (call.service,), calls=(call.call_id,),
                          summary=f"excluded under the registered rule {reason!r} and left out of the denominators")


def _interleaving(run: ValidatedRun, _) -> Iterable[Finding]:
    by_block: dict[str, list[Call]] = defaultdict(list)
    for call in _formal_first(run):
        by_block[call.block_id].append(call)
    for block, calls in sorted(by_block.items()):
        per_service = Counter(c.service for c in calls)
        if len(per_service) < 2 or min(per_service.values()) < 2:
            continue  # with one call of a side, any order is "one after the other"
        ordered = [c.service for c in sorted(calls, key=lambda c: c.started_at)]
        runs = 1 + sum(1 for a, b in zip(ordered, ordered[1:]) if a != b)
        if runs == len(per_service):  # each service ran as one uninterrupted stretch
            first = sorted(calls, key=lambda c: c.started_at)[0]
            yield Finding("not-interleaved", "warning", run.log.file, first.line, "started_at",
                          f"block {block}: the services ran one after another ({' then '.join(dict.fromkeys(ordered))}), "
                          "not interleaved; a difference may be a difference between times, not services",
                          scope="comparison", block=block)


def _concurrency(run: ValidatedRun, _) -> Iterable[Finding]:
    calls = [c for c in _formal_first(run) if c.latency_ms is not None]
    # Timestamps are often logged to the second: allow one second of overlap.
    grace = 1.0
    starts = [c.started_at.timestamp() for c in calls]
    ends = [s + (c.latency_ms or 0) / 1000 - grace for s, c in zip(starts, calls)]
    # A sweep in O(n log n): calls in flight at t started at or before t and end after t.
    by_start = sorted(starts)
    by_done = sorted(max(s, e) for s, e in zip(starts, ends))
    busy_at_start: dict[str, list[int]] = defaultdict(list)
    peak = 0
    for t, end, call in zip(starts, ends, calls):
        in_flight = bisect_right(by_start, t) - bisect_right(by_done, t)
        others = in_flight - (1 if end > t else 0)
        peak = max(peak, others + 1)
        busy_at_start[call.service].append(others)
    limit = run.contract.concurrency
    if limit is not None and peak > limit:
        yield Finding("concurrency-exceeded", "warning", run.log.file, 0, "started_at",
                      f"up to {peak} calls were in flight at once (from started_at and latency_ms); the contract "
                      f"registered {limit}", scope="comparison")
    means = {s: sum(v) / len(v) for s, v in busy_at_start.items() if v}
    overall = sum(sum(v) for v in busy_at_start.values()) / max(1, sum(len(v) for v in busy_at_start.values()))
    # Under heavy load a call more or less in flight is noise: flag a quarter of the load, at least one call.
    if len(means) >= 2 and max(means.values()) - min(means.values()) >= max(1.0, 0.25 * overall):
        text = ", ".join(f"{s} {m:.1f}" for s, m in sorted(means.items()))
        yield Finding("concurrency-unequal", "warning", run.log.file, 0, "started_at",
                      f"the services did not run under the same load: calls already in flight when each call "
                      f"started, on average: {text}", scope="comparison")


def _returned_model(run: ValidatedRun, _) -> Iterable[Finding]:
    return returned_model_findings(run)


def _parameters(run: ValidatedRun, _) -> Iterable[Finding]:
    services = run.contract.services
    if len(services) < 2:
        return
    rel = f"{run.rel_folder}/run.toml"
    keys = sorted({k for s in services for k in s.params})
    for key in keys:
        values = {s.id: s.params.get(key, "unknown") for s in services}
        special = {sid for sid, v in values.items() if isinstance(v, str) and v in SPECIAL_VALUES}
        if special and len({json.dumps(v, sort_keys=True, default=str) for v in values.values()}) > 1:
            shown = "; ".join(f"{sid}: {v}" for sid, v in values.items())
            nth = next(i for i, s in enumerate(services, 1) if s.id in special)
            line = run.contract.line_of(key, "[service.params]", nth)
            yield Finding("parameter-not-comparable", "warning", rel, line, f"service.params.{key}",
                          f"{key} is not known to be equal across services ({shown}); the comparison cannot "
                          "assume the same setting", tuple(sorted(values)), scope="comparison")
    snapshots = {s.id: s.snapshot for s in services}
    unknown = sorted(sid for sid, v in snapshots.items() if v in SPECIAL_VALUES)
    if unknown and len(set(snapshots.values())) > 1:
        nth = next(i for i, s in enumerate(services, 1) if s.id == unknown[0])
        yield Finding("snapshot-unknown", "warning", rel, run.contract.line_of("snapshot", "[[service]]", nth),
                      "service.snapshot",
                      f"the model snapshot behind {', '.join(unknown)} is unknown; a difference may come from a "
                      "different model version, not the service", tuple(unknown))


def _repeated_seeds(run: ValidatedRun, _) -> Iterable[Finding]:
    seen: dict[tuple[str, str], list[Call]] = defaultdict(list)
    for call in _formal_first(run):
        seed = call.extra.get("seed", "").strip()
        if seed:
            seen[(call.service, seed)].append(call)
    for (service, seed), calls in sorted(seen.items()):
        if len(calls) > 1:
            yield Finding("repeated-seed", "warning", run.log.file, calls[1].line, "seed",
                          f"{service}: seed {seed} is used by {len(calls)} calls counted as independent draws; "
                          "copies from one seed are not new samples", (service,),
                          calls=tuple(c.call_id for c in calls),
                          summary="one seed used by several calls counted as independent draws: copies from one "
                          "seed are not new samples")


def _repetitions(run: ValidatedRun, _) -> Iterable[Finding]:
    tasks = Counter((c.service, c.extra.get("task_id", "")) for c in _formal_first(run) if c.extra.get("task_id"))
    distinct = {t for _, t in tasks}
    if len(distinct) > 1 and any(n > 1 for n in tasks.values()) and run.contract.design == "independent":
        yield Finding("repetitions-as-tasks", "warning", run.log.file, 0, "task_id",
                      f"the log has {len(distinct)} tasks with repetitions, but the independent design treats "
                      "every row as an independent draw; repetitions of a task are not new tasks "
                      "(use design = \"repeated\")", scope="run")


def _clusters(run: ValidatedRun, _) -> Iterable[Finding]:
    if run.contract.design in ("paired", "repeated"):
        return  # their differences are resampled by cluster
    sizes = Counter((c.service, c.column("cluster_id")) for c in _formal_first(run) if c.column("cluster_id"))
    shared = sorted({service for (service, _), n in sizes.items() if n > 1})
    if shared:
        first = next(c for c in _formal_first(run) if c.column("cluster_id"))
        yield Finding("clusters-as-independent", "warning", run.log.file, first.line, "cluster_id",
                      f"{', '.join(shared)}: several calls share a cluster_id, but the {run.contract.design} design "
                      "treats every call as independent, so its intervals are too narrow; calls from one document, "
                      "dialogue or template are not new samples (the paired design resamples whole clusters)",
                      tuple(shared))


def _window(run: ValidatedRun, _) -> Iterable[Finding]:
    contract = run.contract
    start = parse_timestamp(contract.window_start) if contract.window_start else None
    end = parse_timestamp(contract.window_end) if contract.window_end else None
    registered = parse_timestamp(contract.registered_at) if contract.registered_at else None
    for call in run.calls:
        if call.phase != "formal":
            continue
        if registered and call.started_at < registered:
            yield Finding("before-registration", "warning", run.log.file, call.line, "started_at",
                          f"call {call.call_id} started before the contract was registered "
                          f"({contract.registered_at}): the plan may have been fitted to the data", (call.service,),
                          calls=(call.call_id,), summary="started before the contract was registered: the plan may "
                          "have been fitted to the data")
        elif (start and call.started_at < start) or (end and call.started_at > end):
            yield Finding("outside-window", "warning", run.log.file, call.line, "started_at",
                          f"call {call.call_id} started at {call.started_at_text}, outside the registered window "
                          f"{contract.window_start} to {contract.window_end}", (call.service,), calls=(call.call_id,),
                          summary=f"started outside the registered window {contract.window_start} to "
                          f"{contract.window_end}")


def _written_after_run(run: ValidatedRun, _) -> Iterable[Finding]:
    if run.contract.written_after_run:
        yield Finding("contract-after-run", "warning", f"{run.rel_folder}/run.toml",
                      run.contract.line_of("registered_at"), "run.registered_at",
                      "the contract was written after the run (registered_at = \"unknown\", as an import writes "
                      "it): its question, thresholds and comparisons were chosen knowing the data, so no decision "
                      "here was pre-registered", scope="verdict")


def _fewer_than_listed(run: ValidatedRun, _) -> Iterable[Finding]:
    """An imported log whose header lists more samples (× epochs) than it holds: the
    report covers the samples held, the harness's own aggregate perhaps all of them."""
    listed = run.contract.environment.get("harness_listed")
    if not isinstance(listed, Mapping):
        return
    held = Counter(c.service for c in run.calls if c.first_submission)
    for service, n in listed.items():
        if isinstance(n, int) and not isinstance(n, bool) and held[service] < n:
            yield Finding("log-incomplete", "warning", f"{run.rel_folder}/run.toml",
                          run.contract.line_of(service, "[environment.harness_listed]", whole_key=True),
                          f"environment.harness_listed.{service}",
                          f"the harness's log of {service} lists {n} samples but holds {held[service]}: the report "
                          "covers those it holds, and the harness's own number may cover more", (service,))


def _retries(run: ValidatedRun, _) -> Iterable[Finding]:
    allowed = allowed_attempts(run.contract.retry)
    if allowed is None:
        return
    for call in run.calls:
        if call.attempt > allowed:
            yield Finding("retry-beyond-contract", "warning", run.log.file, call.line, "attempt",
                          f"call {call.call_id} is attempt {call.attempt}, but the contract's retry rule "
                          f"({run.contract.retry!r}) allows {allowed}", (call.service,), calls=(call.call_id,),
                          summary=f"attempts beyond the {allowed} the contract's retry rule allows")


def _selection(run: ValidatedRun, _) -> Iterable[Finding]:
    tried = run.contract.candidates_tried
    if tried and tried > 1:
        yield Finding("selection-caution", "warning", f"{run.rel_folder}/run.toml",
                      run.contract.line_of("candidates_tried"), "run.candidates_tried",
                      f"{tried} candidates were tried before this run; the best of many looks better than it is, "
                      "so read the verdict as a selection that needs confirming on fresh data", scope="verdict")


def _missing_requests(run: ValidatedRun, _) -> Iterable[Finding]:
    missing: dict[str, list[Call]] = defaultdict(list)
    for call in run.calls:
        if call.request_hex not in run.requests:
            missing[call.request_hash].append(call)
    for rhash, calls in sorted(missing.items()):
        yield Finding("request-missing", "warning", run.log.file, calls[0].line, "request_hash",
                      f"no requests/{rhash[7:]}.json: the request behind {counted(len(calls), 'call')} "
                      "cannot be re-checked",
                      tuple(sorted({c.service for c in calls})), calls=tuple(c.call_id for c in calls))


def _complete_without_artifact(run: ValidatedRun, _) -> Iterable[Finding]:
    for call in run.calls:
        if call.status == "ok" and not call.artifact_path:
            yield Finding("artifact-missing", "warning", run.log.file, call.line, "artifact_path",
                          f"call {call.call_id} returned a complete answer but no artifact was kept: its grade "
                          "cannot be re-checked", (call.service,), calls=(call.call_id,),
                          summary="returned a complete answer but no artifact was kept: the grade cannot be re-checked")


_CALL_CHECKS = (_plan, _pilot, _exclusions, _interleaving, _concurrency, _returned_model, _parameters, _repeated_seeds,
                _repetitions, _clusters, _window, _retries, _selection, _complete_without_artifact, _written_after_run,
                _fewer_than_listed, schedule_findings, grading_findings)
