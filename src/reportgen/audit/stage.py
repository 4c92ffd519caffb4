"""The audit stage: every run's artifacts read, and the run checked against its
contract and for credentials."""

from __future__ import annotations

from dataclasses import dataclass

from reportgen.audit.credentials import Credential, credential_findings, credentials_in_log
from reportgen.audit.protocol import audit_run, call_findings
from reportgen.errors import AuditError
from reportgen.load.artifacts import artifact_hashes, collect_artifacts, drawings_and_graded
from reportgen.model.artifacts import CallArtifacts
from reportgen.model.findings import Finding
from reportgen.model.source import AuditedRun, ValidatedRun, ValidatedSource


def audit_source(validated: ValidatedSource) -> list[AuditedRun]:
    """Read every run's artifacts and check the run against its contract."""
    return [audit_with_artifacts(run, collect_artifacts(run), None, validated.config.not_credentials)
            for run in validated.runs]


def audit_with_artifacts(run: ValidatedRun, artifacts: dict[str, CallArtifacts],
                         clean: set[str] | None = None, not_credentials: tuple[str, ...] = (),
                         known: KnownFindings | None = None) -> AuditedRun:
    """The run checked against its contract, and its inputs for credentials (``clean``,
    ``not_credentials``: see ``credential_findings``). ``known``: what of its audit was
    found before its folder was read (``known_findings``)."""
    drawings, graded = drawings_and_graded(artifacts)
    findings = (audit_run(run, artifact_hashes(artifacts), drawings, graded, known.of_calls if known else None)
                + credential_findings(run, artifacts, clean, not_credentials, known.in_log if known else None))
    return AuditedRun(run, artifacts, findings)


@dataclass(frozen=True)
class KnownFindings:
    """What of a run's audit reads only its contract, calls, grading and log: the findings
    of its calls (``call_findings``) and the credentials in its log and contract
    (``credentials_in_log``)."""

    of_calls: tuple[Finding, ...]
    in_log: list[Credential]


def known_findings(run: ValidatedRun, not_credentials: tuple[str, ...]) -> KnownFindings:
    """``KnownFindings`` of ``run``, as it is loaded (its folder's files not needed)."""
    return KnownFindings(call_findings(run), credentials_in_log(run, not_credentials))


def refuse_errors(audited: list[AuditedRun]) -> None:
    errors = [f for a in audited for f in a.findings if f.severity == "error"]
    if errors:
        raise AuditError(errors)
