"""Call-log rows -> typed calls, every problem reported with file, line and field."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from pathlib import Path
from typing import Mapping

from reportgen.errors import Collector
from reportgen.load.calllog import OPTIONAL_COLUMNS, REQUIRED_COLUMNS
from reportgen.load.files import artifact_problem
from reportgen.model.calls import TRUE_WORDS, Call
from reportgen.model.config import PHASES, SAFE_ID, RunContract, parse_timestamp
from reportgen.model.outcomes import STATUSES, TECHNICAL_FAILURES, is_status
from reportgen.model.source import RawLog, RawRow, RunFiles

HASH_RE = re.compile(r"^sha256:([0-9a-f]{64})$")


def _parse_calls(log: RawLog, contract: RunContract, problems: Collector) -> list[Call]:
    """The log's rows as calls; their artifact paths are checked apart
    (``check_artifact_paths``), once the run folder is listed."""
    calls: list[Call] = []
    seen_ids: dict[str, int] = {}
    service_ids = {s.id for s in contract.services}
    for row in log.rows:
        call = _parse_row(row, log.file, contract, service_ids, problems)
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


def check_artifact_paths(calls: list[Call], folder: Path, files: RunFiles | None, file: str,
                         problems: Collector) -> list[Call]:
    """The calls whose artifact path is safe and exists in ``folder`` (``files``: the
    folder as listed); each other one is reported at its line."""
    kept = []
    for call in calls:
        message = artifact_problem(folder, call.artifact_path, files) if call.artifact_path else None
        if message:
            problems.add(file, call.line, "artifact_path", message)
        else:
            kept.append(call)
    return kept


def _parse_row(row: RawRow, file: str, contract: RunContract, service_ids: set[str],
               problems: Collector) -> Call | None:
    r = _RowReader(row, file, problems)
    run_id = _run_id(r, contract)
    service = _service(r, service_ids)
    block_id = _block_id(r, contract)
    started_text, started = _timestamp(r)
    rhash = _request_hash(r)
    status = _status(r)
    latency = _latency(r)
    disputed = _flag(r, "disputed")
    critical = _flag(r, "critical")
    partial = _flag(r, "partial")
    qualified = _qualified(r, status, disputed)
    attempt = _attempt(r)
    phase = _phase(r)
    artifact = r.get("artifact_path")
    call_id = _call_id(r, service, run_id, started_text, rhash, block_id, attempt)
    if not r.ok or not is_status(status):
        return None
    assert started is not None
    extra = {k: val for k, val in row.values.items() if k not in _READ_ABOVE and (k in OPTIONAL_COLUMNS or val)}
    if contract.partial_credit is not None and status == "ok" and qualified is not None and not r.get("score"):
        # run.partial_credit: a graded call without a score of its own scores 1 when it
        # passed, the registered share when graded partial credit, else 0.
        extra["score"] = "1" if qualified else repr(contract.partial_credit) if partial else "0"
    return Call(
        call_id=call_id, line=row.line, run_id=run_id, block_id=block_id, service=service,
        service_group=r.get("service_group"), requested_model=r.get("requested_model"),
        returned_model=r.get("returned_model"), started_at=started, started_at_text=started_text,
        request_hash=rhash, status=status, finish_reason=r.get("finish_reason"), latency_ms=latency,
        qualified=qualified, failure_reason=r.get("failure_reason"), artifact_path=artifact,
        attempt=attempt, critical=bool(critical), disputed=bool(disputed), phase=phase, extra=extra or _NO_EXTRA,
    )


_READ_ABOVE = frozenset(REQUIRED_COLUMNS) | {"call_id", "attempt", "critical", "disputed", "phase"}
# The columns of a call with none beyond those read above: one mapping every such call
# shares (an empty dict a call was 64 MB at a million calls). A Call's extra is never
# written to once made (it is typed as a read-only Mapping).
_NO_EXTRA: Mapping[str, str] = {}


class _RowReader:
    """One row's values, stripped; a problem is reported at the row's line and marks
    the row as not loadable (its other fields are still checked)."""

    def __init__(self, row: RawRow, file: str, problems: Collector):
        self.row, self.file, self.problems = row, file, problems
        self.ok = True
        # Stripped once: some twenty fields are read per row, 100,000 rows over.
        self.values = {k: v.strip() for k, v in row.values.items() if v}

    def get(self, name: str) -> str:
        return self.values.get(name, "")

    def bad(self, field: str, message: str) -> None:
        self.ok = False
        self.problems.add(self.file, self.row.line, field, message)


def _run_id(r: _RowReader, contract: RunContract) -> str:
    run_id = r.get("run_id")
    if run_id != contract.id:
        r.bad("run_id", f"{run_id!r} does not match run.id {contract.id!r} in run.toml")
    return run_id


def _service(r: _RowReader, service_ids: set[str]) -> str:
    service = r.get("service")
    if service not in service_ids:
        r.bad("service", f"{service!r} is not a [[service]] id in run.toml "
              f"(known: {', '.join(sorted(service_ids))})")
    return service


def _block_id(r: _RowReader, contract: RunContract) -> str:
    block_id = r.get("block_id")
    if contract.blocks and block_id not in contract.blocks:
        r.bad("block_id", f"{block_id!r} is not one of the registered blocks ({', '.join(contract.blocks)})")
    return block_id


def _timestamp(r: _RowReader) -> tuple[str, datetime | None]:
    text = r.get("started_at")
    started = parse_timestamp(text)
    if started is None:
        try:
            naive = datetime.fromisoformat(text)
        except ValueError:
            r.bad("started_at", f"{text!r} is not an ISO 8601 date and time")
        else:
            r.bad("started_at", f"{text!r} has no UTC offset; write it as "
                  f"{naive.isoformat()}+00:00 (or the offset it was recorded in)")
    return text, started


def _request_hash(r: _RowReader) -> str:
    rhash = r.get("request_hash")
    if not HASH_RE.match(rhash):
        r.bad("request_hash", f"{rhash!r} is not 'sha256:' followed by 64 lowercase hex digits")
    return rhash


def _status(r: _RowReader) -> str:
    status = r.get("status")
    if status not in STATUSES:
        r.bad("status", f"{status!r} is not one of {', '.join(STATUSES)}")
    return status


def _latency(r: _RowReader) -> float | None:
    latency = None
    if r.get("latency_ms"):
        try:
            latency = float(r.get("latency_ms"))
            if not latency >= 0 or latency == float("inf"):
                raise ValueError
        except ValueError:
            r.bad("latency_ms", f"{r.get('latency_ms')!r} is not a non-negative number of milliseconds")
    return latency


def _flag(r: _RowReader, field: str) -> bool | None:
    text = r.get(field)
    if not text:
        return False
    value = TRUE_WORDS.get(text.lower())
    if value is None:
        r.bad(field, f"{text!r} is not true or false")
    return value


def _qualified(r: _RowReader, status: str, disputed: bool | None) -> bool | None:
    text = r.get("qualified")
    qualified = TRUE_WORDS.get(text.lower()) if text else None
    if text and qualified is None:
        r.bad("qualified", f"{text!r} is not true or false")
    elif status in TECHNICAL_FAILURES and qualified is not None:
        r.bad("qualified", f"must be empty for a technical failure (status {status!r}); "
              "a call that returned nothing was never graded")
    elif status == "ok" and qualified is None and not disputed:
        r.bad("qualified", "a complete return (status 'ok') needs a grade: true or false")
    return qualified


def _attempt(r: _RowReader) -> int:
    # A value below 1 is kept as read: it is part of the derived call id of a row that is reported anyway.
    attempt = 1
    if r.get("attempt"):
        try:
            attempt = int(r.get("attempt"))
            if attempt < 1:
                raise ValueError
        except ValueError:
            r.bad("attempt", f"{r.get('attempt')!r} is not a positive integer (1 = first submission)")
    return attempt


def _phase(r: _RowReader) -> str:
    phase = r.get("phase") or "formal"
    if phase not in PHASES:
        r.bad("phase", f"{phase!r} is not 'pilot' or 'formal'")
    return phase


def _call_id(r: _RowReader, service: str, run_id: str, started: str, rhash: str, block: str, attempt: int) -> str:
    call_id = r.get("call_id") or _derived_call_id(service, run_id, started, rhash, block, attempt)
    if not SAFE_ID.match(call_id):
        r.bad("call_id", f"{call_id!r} is not a usable id (letters, digits, '.', '_', '-'; it names a page)")
    return call_id


def _derived_call_id(service: str, run_id: str, started: str, rhash: str, block: str, attempt: int) -> str:
    key = "\x1f".join((run_id, service, block, started, rhash, str(attempt)))
    return f"{service}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
