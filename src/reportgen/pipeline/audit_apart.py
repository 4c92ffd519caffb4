"""The audit of a large run, worked out in a forked copy of the build (see ``forked``)
while the build itself analyses the run: forked once the run's artifacts are listed.

Without --redact the audit changes nothing the other stages use: it only finds (its
findings) and learns (the artifact contents it found free of credentials). Working
those out walks every call and artifact of the run: a rebuild of 100,000 calls spent
some three seconds on it with the second core idle. Not for the largest runs (see
``Tuning.audit_apart_max_calls``): walking every call, the copy comes to hold a copy of
each, as much memory again as the build's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reportgen.audit.stage import KnownFindings, audit_with_artifacts
from reportgen.fork import Forked
from reportgen.model.artifacts import CallArtifacts
from reportgen.model.findings import Finding
from reportgen.model.source import ValidatedRun, ValidatedSource
from reportgen.pipeline.runner import Runner


@dataclass(frozen=True)
class Found:
    """What the audit of one run sends back."""

    findings: tuple[Finding, ...]
    clean: frozenset[str]  # artifact contents found free of credentials now


class AuditsApart:
    """The runs being audited in forked copies of the build, by run id. Leaving the
    ``with`` block stops any copy still at work."""

    def __init__(self, validated: ValidatedSource, artifacts: Mapping[str, dict[str, CallArtifacts]],
                 clean: set[str] | None, redact: bool, runner: Runner,
                 known: Mapping[str, KnownFindings] | None = None) -> None:
        """``known``: what of each run's audit was found before its folder was read, by run id."""
        self.running: dict[str, Forked[Found]] = {}
        if redact:
            return  # --redact audits the redacted copies, which only the build's own process makes
        for run in validated.runs:
            if runner.audits_apart(len(run.calls)):
                self.running[run.contract.id] = _fork_audit(run, artifacts[run.contract.id], clean,
                                                            validated.config.not_credentials,
                                                            (known or {}).get(run.contract.id))

    def __enter__(self) -> "AuditsApart":
        return self

    def __exit__(self, *exc: object) -> None:
        for copy in self.running.values():
            copy.stop()
        self.running.clear()

    def result(self, run_id: str) -> Found | None:
        """The run's findings, once its copy is done; None when it is not audited apart or
        its copy failed (the build then audits the run itself)."""
        copy = self.running.pop(run_id, None)
        found = copy.result() if copy is not None else None
        return found if isinstance(found, Found) else None


def _fork_audit(run: ValidatedRun, artifacts: dict[str, CallArtifacts], clean: set[str] | None,
               not_credentials: tuple[str, ...], known: KnownFindings | None) -> Forked[Found]:
    def audit() -> Found:
        before = set(clean) if clean is not None else set()
        audited = audit_with_artifacts(run, artifacts, clean, not_credentials, known)
        return Found(audited.findings, frozenset(clean - before) if clean is not None else frozenset())

    return Forked(audit)
