"""Call-log rows -> typed calls, every problem reported with file, line and field."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from pathlib import Path

from reportgen.errors import Collector
from reportgen.load.calllog import OPTIONAL_COLUMNS, REQUIRED_COLUMNS
from reportgen.load.files import artifact_problem
from reportgen.model.calls import TRUE_WORDS, Call
from reportgen.model.config import SAFE_ID, RunContract, parse_timestamp
from reportgen.model.outcomes import STATUSES, TECHNICAL_FAILURES
from reportgen.model.source import RawLog, RawRow, RunFiles

HASH_RE = re.compile(r"^sha256:([0-9a-f]{64})$")


def _parse_calls(log: RawLog, contract: RunContract, folder: Path | None, problems: Collector,
                 files: RunFiles | None = None) -> list[Call]:
    calls: list[Call] = []
    seen_ids: dict[str, int] = {}
    service_ids = {s.id for s in contract.services}
    for row in log.rows:
        call = _parse_row(row, log.file, contract, service_ids, folder, problems, files)
        if call is None:
            continue
        if call.call_id in seen_ids:
            problems.add(log.file, row.line, "call_id",
                         f"{call.call_id!r} was already used on line {seen_ids[call.call_id]}")
            continue
        seen_ids[call.call_id] = row.line
        calls.append(call)
    if not calls and not problems.problems:
        problems.add(log.file, 1, "", "the log has no calls")
    return calls


def _parse_row(row: RawRow, file: str, contract: RunContract, service_ids: set[str],
               folder: Path | None, problems: Collector, files: RunFiles | None) -> Call | None:
    v = row.values
    ok = True

    def bad(field: str, message: str) -> None:
        nonlocal ok
        ok = False
        problems.add(file, row.line, field, message)

    def get(name: str) -> str:
        return (v.get(name) or "").strip()

    run_id = get("run_id")
    if run_id != contract.id:
        bad("run_id", f"{run_id!r} does not match run.id {contract.id!r} in run.toml")
    service = get("service")
    if service not in service_ids:
        bad("service", f"{service!r} is not a [[service]] id in run.toml "
            f"(known: {', '.join(sorted(service_ids))})")
    block_id = get("block_id")
    if contract.blocks and block_id not in contract.blocks:
        bad("block_id", f"{block_id!r} is not one of the registered blocks ({', '.join(contract.blocks)})")
    started_text = get("started_at")
    started = parse_timestamp(started_text)
    if started is None:
        try:
            naive = datetime.fromisoformat(started_text)
        except ValueError:
            bad("started_at", f"{started_text!r} is not an ISO 8601 date and time")
        else:
            bad("started_at", f"{started_text!r} has no UTC offset; write it as "
                f"{naive.isoformat()}+00:00 (or the offset it was recorded in)")
    rhash = get("request_hash")
    if not HASH_RE.match(rhash):
        bad("request_hash", f"{rhash!r} is not 'sha256:' followed by 64 lowercase hex digits")
    status = get("status")
    if status not in STATUSES:
        bad("status", f"{status!r} is not one of {', '.join(STATUSES)}")
    latency = None
    if get("latency_ms"):
        try:
            latency = float(get("latency_ms"))
            if not latency >= 0 or latency == float("inf"):
                raise ValueError
        except ValueError:
            bad("latency_ms", f"{get('latency_ms')!r} is not a non-negative number of milliseconds")
    disputed = _flag(get("disputed"), "disputed", bad)
    critical = _flag(get("critical"), "critical", bad)
    qualified_text = get("qualified").lower()
    qualified = TRUE_WORDS.get(qualified_text) if qualified_text else None
    if qualified_text and qualified is None:
        bad("qualified", f"{get('qualified')!r} is not true or false")
    elif status in TECHNICAL_FAILURES and qualified is not None:
        bad("qualified", f"must be empty for a technical failure (status {status!r}); "
            "a call that returned nothing was never graded")
    elif status == "ok" and qualified is None and not disputed:
        bad("qualified", "a complete return (status 'ok') needs a grade: true or false")
    attempt = 1
    if get("attempt"):
        try:
            attempt = int(get("attempt"))
            if attempt < 1:
                raise ValueError
        except ValueError:
            bad("attempt", f"{get('attempt')!r} is not a positive integer (1 = first submission)")
    phase = get("phase") or "formal"
    if phase not in ("pilot", "formal"):
        bad("phase", f"{phase!r} is not 'pilot' or 'formal'")
    artifact = get("artifact_path")
    if artifact and folder is not None:
        message = artifact_problem(folder, artifact, files)
        if message:
            bad("artifact_path", message)
    call_id = get("call_id") or _derived_call_id(service, run_id, started_text, rhash, block_id, attempt)
    if not SAFE_ID.match(call_id):
        bad("call_id", f"{call_id!r} is not a usable id (letters, digits, '.', '_', '-'; it names a page)")
    if not ok:
        return None
    assert started is not None
    known = set(REQUIRED_COLUMNS) | {"call_id", "attempt", "critical", "disputed", "phase"}
    extra = {k: val for k, val in v.items() if k not in known and (k in OPTIONAL_COLUMNS or val)}
    return Call(
        call_id=call_id, line=row.line, run_id=run_id, block_id=block_id, service=service,
        service_group=get("service_group"), requested_model=get("requested_model"),
        returned_model=get("returned_model"), started_at=started, started_at_text=started_text,
        request_hash=rhash, status=status, finish_reason=get("finish_reason"), latency_ms=latency,
        qualified=qualified, failure_reason=get("failure_reason"), artifact_path=artifact,
        attempt=attempt, critical=bool(critical), disputed=bool(disputed), phase=phase, extra=extra,
    )


def _flag(text: str, field: str, bad) -> bool | None:
    if not text:
        return False
    value = TRUE_WORDS.get(text.lower())
    if value is None:
        bad(field, f"{text!r} is not true or false")
    return value


def _derived_call_id(service: str, run_id: str, started: str, rhash: str, block: str, attempt: int) -> str:
    key = "\x1f".join((run_id, service, block, started, rhash, str(attempt)))
    return f"{service}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
