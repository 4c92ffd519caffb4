"""``build --redact``: publish a copy with every credential replaced, and say so.

Without --redact a credential is an error and nothing is published. With it, each
credential is replaced by a marker naming its kind (``[REDACTED bearer token]``) in the
published log, request bodies and artifacts. The redaction is recorded file by file
(line, kind, sha256 before and after) in ``data/<run>/redactions.json``; a redacted
request body is published with the hash of its redacted canonical JSON recorded beside
the logged hash, so ``verify`` can still check it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from reportgen.audit.credentials import redact as redact_bytes
from reportgen.audit.stage import AuditedRun
from reportgen.errors import InputError, Problem
from reportgen.load.requests import request_hash
from reportgen.model.artifacts import CallArtifacts, sha256
from reportgen.model.calls import Call
from reportgen.model.findings import Finding
from reportgen.model.grading import Grading
from reportgen.model.source import RedactionSummary, ValidatedRun


def redact_run(run: ValidatedRun, artifacts: dict[str, CallArtifacts], findings: tuple[Finding, ...],
               not_credentials: tuple[str, ...] = ()
               ) -> tuple[ValidatedRun, dict[str, CallArtifacts], tuple[Finding, ...]]:
    if not any(f.code == "credential" for f in findings):
        return run, artifacts, findings
    records: list[dict[str, object]] = []
    allowed = frozenset(not_credentials)  # texts declared not credentials: published as they are

    def redact(data: bytes) -> tuple[bytes, list[tuple[int, str]]]:
        return redact_bytes(data, allowed)

    def record(file: str, before: bytes, after: bytes, found: list[tuple[int, str]]) -> None:
        records.append({"file": file, "replaced": [{"line": line, "kind": kind} for line, kind in found],
                        "original_sha256": sha256(before), "published_sha256": sha256(after)})

    before = run.log_bytes
    log_bytes, found = redact(before)
    if found:
        record(run.log.file, before, log_bytes, found)
    requests: dict[str, bytes] = {}
    request_hashes: dict[str, str] = {}
    for hexdigest, data in sorted(run.requests.items()):
        red, found = redact(data)
        requests[hexdigest] = red
        if found:
            record(f"{run.rel_folder}/requests/{hexdigest}.json", data, red, found)
            request_hashes[hexdigest] = request_hash(json.loads(red))
    paths = {c.call_id: c.artifact_path for c in run.calls}
    new_artifacts = {}
    for call_id, bundle in artifacts.items():
        files = []
        for artifact in bundle.files:
            red, found = redact(artifact.data)
            if found:
                record(f"{run.rel_folder}/{paths[call_id]}/{artifact.name}", artifact.data, red, found)
                artifact = dataclasses.replace(artifact, content=red, sha256=sha256(red), redacted_from=artifact.sha256)
            files.append(artifact)
        new_artifacts[call_id] = CallArtifacts(call_id, tuple(files))
    grading = _redacted_grades(run, redact, record)
    summary: RedactionSummary = {"schema": "reportgen.redactions/1", "requests": request_hashes, "files": records}
    calls = tuple(_redact_call(c, allowed) for c in run.calls)  # the pages show the log's fields too
    run = dataclasses.replace(run, redacted_log=log_bytes, requests=requests, redactions=(summary,), calls=calls,
                              grading=grading)
    notes = tuple(
        dataclasses.replace(f, code="credential-redacted", severity="warning",
                            message=f"{f.message.split(':')[0]} was replaced by a [REDACTED] marker in the "
                            "published copy (recorded in redactions.json); the original stays in your source "
                            "folder: revoke it", id=f.id.replace(".credential.", ".credential-redacted."))
        for f in findings if f.code == "credential")
    return run, new_artifacts, tuple(f for f in findings if f.code != "credential") + notes


def _redacted_grades(run: ValidatedRun, redact: Callable[[bytes], tuple[bytes, list[tuple[int, str]]]],
                     record: Callable[[str, bytes, bytes, list[tuple[int, str]]], None]) -> Grading:
    """The grades files as published: a credential in a grader's reason replaced."""
    blind = run.grading.blind
    if blind is None:
        return run.grading
    files = {}
    for name, data in blind.files.items():
        files[name], found = redact(data)
        if found:
            record(f"{blind.folder}/{name}", data, files[name], found)
    return dataclasses.replace(run.grading, blind=dataclasses.replace(blind, files=MappingProxyType(files)))


def _text(value: str, allowed: frozenset[str]) -> str:
    return redact_bytes(value.encode("utf-8"), allowed)[0].decode("utf-8") if value else value


def _redact_call(call: Call, allowed: frozenset[str]) -> Call:
    changes: dict[str, Any] = {f.name: _text(getattr(call, f.name), allowed) for f in dataclasses.fields(call)
               if isinstance(getattr(call, f.name), str) and f.name not in ("call_id", "request_hash")}
    if call.grades is not None:  # each grader's reason, as the call's sheet shows it
        changes["grades"] = dataclasses.replace(call.grades, grades=tuple(
            dataclasses.replace(g, reason=_text(g.reason, allowed)) for g in call.grades.grades))
    return dataclasses.replace(call, extra={k: _text(v, allowed) for k, v in call.extra.items()}, **changes)


def redactions_json(run: ValidatedRun) -> bytes | None:
    if not run.redactions:
        return None
    return (json.dumps(run.redactions[0], indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def is_redacted(run: ValidatedRun, hexdigest: str) -> str | None:
    """The published hash of a redacted request body, if it was redacted."""
    return run.redactions[0]["requests"].get(hexdigest) if run.redactions else None


def redact_audited(audited: AuditedRun, not_credentials: tuple[str, ...] = ()) -> AuditedRun:
    run = audited.run
    if not run.log.name.endswith(".parquet"):
        return AuditedRun(*redact_run(run, audited.artifacts, audited.findings, not_credentials))
    # Redaction rewrites text; a Parquet log is published as it is, so it must be clean.
    in_log = [f for f in audited.findings if f.code == "credential" and f.file == run.log.file]
    if in_log:
        raise InputError([Problem(f.file, f.line, "", f"{f.message.split(':')[0]}: --redact rewrites text "
                                  "logs only; convert this Parquet log to CSV to publish a redacted copy")
                          for f in in_log])
    redacted, artifacts, findings = redact_run(run, audited.artifacts, audited.findings, not_credentials)
    return AuditedRun(dataclasses.replace(redacted, redacted_log=run.redacted_log), artifacts, findings)
