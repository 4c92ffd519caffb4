"""An imported run -> an ordinary report source: run.toml, calls.csv, requests/ and
artifacts/, byte for byte the same for the same logs.

The contract is honest about what an importer cannot know: it was written after the run
(``registered_at = "unknown"``), and every setting the log does not record is "unknown".
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import overload

from reportgen.progress import Progress, QuietProgress
from reportgen.importers.assemble import ImportedCall, ImportedRun
from reportgen.importers.wording import column_notes, harness_lines, harness_name, partial_choice, question

BASE_COLUMNS = ["run_id", "block_id", "service", "service_group", "requested_model", "returned_model",
                "started_at", "request_hash", "status", "finish_reason", "latency_ms", "qualified",
                "failure_reason", "artifact_path", "call_id", "grade_reason"]


def canonical(body: Mapping[str, object]) -> bytes:
    """The request's canonical JSON (keys sorted, no insignificant whitespace), as hashed."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False, default=str).encode("utf-8")


def write_run(run: ImportedRun, source: Path, progress: Progress = QuietProgress()) -> Path:
    """Write one run under ``source/experiments/<id>/`` (replacing an earlier import of
    it) and return its folder."""
    folder = source / "experiments" / run.id
    if folder.exists():
        _clear(folder)
    (folder / "requests").mkdir(parents=True)
    rows = []
    with progress.bar(f"writing {run.id}", len(run.calls)) as bar:
        for call in run.calls:
            # One sample's heavy part at a time (a lazy Sample reads it from the log now).
            payload, artifacts = call.sample.materialize()
            body = canonical(payload)
            hexdigest = hashlib.sha256(body).hexdigest()
            request = folder / "requests" / f"{hexdigest}.json"
            if not request.exists():
                request.write_bytes(body)
            rows.append(_row(run, call, hexdigest, _artifacts(folder, call, artifacts)))
            del payload, artifacts, body
            bar.update(1)
    (folder / "calls.csv").write_text(_csv(rows), encoding="utf-8", newline="")
    (folder / "run.toml").write_text(contract_text(run), encoding="utf-8")
    return folder


def write_site_file(source: Path, title: str) -> bool:
    """reportgen.toml, only when the source has none: a user's own is never touched."""
    path = source / "reportgen.toml"
    if path.exists():
        return False
    source.mkdir(parents=True, exist_ok=True)
    path.write_text(f'title = {_toml(title)}\nversion = "v1"\n', encoding="utf-8")
    return True


def _clear(folder: Path) -> None:
    """Remove an earlier import of this run: only the files an import writes."""
    import shutil

    for name in ("calls.csv", "run.toml"):
        (folder / name).unlink(missing_ok=True)
    for sub in ("requests", "artifacts"):
        if (folder / sub).is_dir():
            shutil.rmtree(folder / sub)


def _artifacts(folder: Path, call: ImportedCall, artifacts: tuple[tuple[str, bytes], ...]) -> str:
    if not artifacts:
        return ""
    target = folder / "artifacts" / call.service / call.call_id
    target.mkdir(parents=True)
    for name, data in artifacts:
        # Names come from the reader, never from the log: still, nothing leaves the folder.
        if "/" in name or "\\" in name or name in ("", ".", ".."):
            raise ValueError(f"artifact name {name!r} is not a plain file name")
        (target / name).write_bytes(data)
    return f"artifacts/{call.service}/{call.call_id}"


def _row(run: ImportedRun, call: ImportedCall, hexdigest: str, artifact_path: str) -> dict[str, str]:
    s = call.sample
    log = next(svc.log for svc in run.services if svc.id == call.service)
    ok = s.status == "ok"
    row = {
        "run_id": run.id, "block_id": "1", "service": call.service, "service_group": log.harness,
        "requested_model": log.model, "returned_model": s.returned_model or "unknown",
        "started_at": s.started_at or log.started_at, "request_hash": f"sha256:{hexdigest}",
        "status": s.status, "finish_reason": s.finish_reason,
        "latency_ms": "" if s.latency_ms is None else _number(s.latency_ms),
        "qualified": ("true" if s.passed else "false") if ok and run.kind == "pass" else ("true" if ok else ""),
        "failure_reason": "" if ok else (s.failure_reason or s.status), "artifact_path": artifact_path,
        "call_id": call.call_id, "grade_reason": s.grade_reason,
    }
    if run.design == "paired":
        row["pair_id"] = s.unit
    elif run.design == "repeated":
        row.update(task_id=s.unit, repetition=str(s.epoch))
    else:
        row["task_id"] = s.unit
    if run.kind == "score":
        row["score"] = "" if s.score is None or not math.isfinite(s.score) else _number(s.score)
    row["slice"] = s.slice
    if s.partial:
        row["partial"] = "true"
    row.update({name: value for name, value in sorted(s.columns.items())})
    return row


def _csv(rows: list[dict[str, str]]) -> str:
    extra = sorted({k for r in rows for k in r} - set(BASE_COLUMNS))
    columns = BASE_COLUMNS + [c for c in ("pair_id", "task_id", "repetition", "score", "slice", "partial")
                              if c in extra]
    columns += [c for c in extra if c not in columns]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def contract_text(run: ImportedRun) -> str:
    """run.toml: what the logs record, "unknown" for what they do not."""
    first = run.services[0].log
    planned = Counter(c.service for c in run.calls)
    # A long scorer name (R's vitals writes its call) stays in the question, not the title.
    named = f"{run.task}: {run.metric}" if len(run.metric) <= 32 else run.task
    title = f"{named} ({harness_name(first.harness)} import)"
    lines = [
        f"# Imported from {first.harness} {first.harness_version} logs. The contract was written after",
        "# the run: edit what you know (question, thresholds, parameters) and build again.",
        "", "[run]",
        f"id = {_toml(run.id)}", f"title = {_toml(title)}",
        f"question = {_toml(question(run))}", 'phase = "formal"', 'registered_at = "unknown"',
        f"design = {_toml(run.design)}",
        f"primary_metric = {_toml('score' if run.kind == 'score' else 'first_pass_rate')}", *partial_choice(run),
        f"higher_is_better = {_toml(run.higher_is_better)}", f"baseline = {_toml(run.baseline)}",
        f"candidates = [{', '.join(_toml(c) for c in run.candidates)}]", "alpha = 0.05",
        "planned_calls = {" + ", ".join(f"{_key(s.id)} = {planned[s.id]}" for s in run.services) + "}",
        'blocks = ["1"]', 'order = "unknown"', 'retry = "unknown"',
        "exclusion_rules = []",
        # A unit one log holds was never run by the other model: not a failed call.
        *(['unmatched_units = "leave_out"'] if run.design in ("paired", "repeated") and any(
            c.one_sided for c in run.calls) else []),
        "", "[environment]", f"harness = {_toml(f'{first.harness} {first.harness_version}')}",
        # The log's own name, never the folder it was read from (which may be a user's home).
        f"imported_from = [{', '.join(_toml(Path(s.log.source).name) for s in run.services)}]",
    ]
    if run.notes:  # what the import noticed, kept where every reader of the contract sees it
        lines += ["import_notes = ["] + [f"  {_toml(note)}," for note in run.notes] + ["]"]
    notes = {k: v for svc in run.services for k, v in sorted(svc.log.column_notes.items())} | column_notes(run)
    if notes:  # what each kept column is (whose hash is which), shown with the contract
        lines += ["", "[environment.columns]"] + [f"{_key(k)} = {_toml(v)}" for k, v in sorted(notes.items())]
    held = Counter(c.service for c in run.calls)
    listed = [(svc.id, svc.log.listed_units) for svc in run.services
              if svc.log.listed_units is not None and svc.log.listed_units > held[svc.id]]
    if listed:  # the log's header lists more samples than it holds: the audit says so
        lines += ["", "[environment.harness_listed]"] + [f"{_key(sid)} = {n}" for sid, n in listed]
    lines += harness_lines(run, _key, _toml)
    lines += [
        "", "[task]", f"id = {_toml(run.task)}", f"prompt = {_toml(first.prompt or 'unknown')}",
        f"grading_rule = {_toml(f'{run.metric}, as {first.harness} scored it')}",
    ]
    for svc in run.services:
        lines += ["", "[[service]]", f"id = {_toml(svc.id)}", f"group = {_toml(svc.log.harness)}",
                  f"requested_model = {_toml(svc.log.model)}", 'snapshot = "unknown"', "", "[service.params]"]
        params = dict(svc.log.params)
        for name in ("temperature", "max_tokens", "seed"):
            params.setdefault(name, "unknown")
        lines += [f"{_key(k)} = {_toml(v)}" for k, v in sorted(params.items()) if _toml(v) is not None]
    return "\n".join(lines) + "\n"


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _key(name: str) -> str:
    """A TOML key: bare when TOML allows it (ASCII letters, digits, - and _), else quoted."""
    return name if _BARE_KEY.fullmatch(name) else _toml(name)


@overload
def _toml(value: str | float) -> str: ...


@overload
def _toml(value: object) -> str | None: ...


def _toml(value: object) -> str | None:
    """A TOML value for a string, number or boolean (None for anything else)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value) if math.isfinite(value) else '"unknown"'
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    return None


def _number(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else str(int(value)) if abs(value) < 1e15 else repr(value)
