"""The audit stage: every run's artifacts read, and the run checked against its
contract and for credentials."""

from __future__ import annotations

from reportgen.audit.credentials import credential_findings
from reportgen.audit.protocol import audit_run
from reportgen.errors import AuditError
from reportgen.load.artifacts import artifact_hashes, collect_artifacts, drawings_and_graded
from reportgen.model.artifacts import CallArtifacts
from reportgen.model.source import AuditedRun, ValidatedRun, ValidatedSource


def audit_source(validated: ValidatedSource) -> list[AuditedRun]:
    """Read every run's artifacts and check the run against its contract."""
    return [audit_with_artifacts(run, collect_artifacts(run), None, validated.config.not_credentials)
            for run in validated.runs]


def audit_with_artifacts(run: ValidatedRun, artifacts: dict[str, CallArtifacts],
                         clean: set[str] | None = None, not_credentials: tuple[str, ...] = ()) -> AuditedRun:
    """The run checked against its contract, and its inputs for credentials (``clean``,
    ``not_credentials``: see ``credential_findings``)."""
    drawings, graded = drawings_and_graded(artifacts)
    findings = (audit_run(run, artifact_hashes(artifacts), drawings, graded)
                + credential_findings(run, artifacts, clean, not_credentials))
    return AuditedRun(run, artifacts, findings)


def refuse_errors(audited: list[AuditedRun]) -> None:
    errors = [f for a in audited for f in a.findings if f.severity == "error"]
    if errors:
        raise AuditError(errors)
