"""The audit of a large run, worked out in a forked copy of the build while the build
itself analyses the run and lists its artifacts.

Without --redact the audit changes nothing the other stages use: it only finds (its
findings) and learns (the artifact contents it found free of credentials). Those are
small, while working them out walks every call and artifact of the run: a rebuild of
100,000 calls spends some three seconds on it with the second core idle, since every
drawing is in the render cache. So a copy of the build made by fork, which already
holds the validated run, works them out beside the build and sends them back through a
pipe. Anything going wrong there (no fork, a failed copy, an input changed on disk)
leaves the audit to the build's own process, which then meets the same problem and
reports it as it always does.
"""

from __future__ import annotations

import os
import pickle
import signal
from dataclasses import dataclass

from reportgen.audit.stage import audit_with_artifacts
from reportgen.load.artifacts import collect_artifacts
from reportgen.model.findings import Finding
from reportgen.model.source import ValidatedRun, ValidatedSource

# Calls from which a run is audited apart (forking a build costs some milliseconds,
# auditing a small run less).
AUDIT_APART = 20_000


@dataclass(frozen=True)
class Found:
    """What the audit of one run sends back."""

    findings: tuple[Finding, ...]
    clean: frozenset[str]  # artifact contents found free of credentials now


class AuditsApart:
    """The runs being audited in forked copies of the build, by run id. Leaving the
    ``with`` block stops any copy still at work."""

    def __init__(self, validated: ValidatedSource, clean: set[str] | None, redact: bool) -> None:
        self.running: dict[str, tuple[int, int]] = {}  # run id -> (pid, read end of its pipe)
        if redact or not hasattr(os, "fork"):
            return  # --redact audits the redacted copies, which only the build's own process makes
        for run in validated.runs:
            if len(run.calls) >= AUDIT_APART:
                self.running[run.contract.id] = _fork_audit(run, clean)

    def __enter__(self) -> "AuditsApart":
        return self

    def __exit__(self, *exc) -> None:
        for pid, fd in self.running.values():
            _stop(pid, fd)
        self.running.clear()

    def result(self, run_id: str) -> Found | None:
        """The run's findings, once its copy is done; None when it is not audited apart or
        its copy failed (the build then audits the run itself)."""
        if run_id not in self.running:
            return None
        pid, fd = self.running.pop(run_id)
        with os.fdopen(fd, "rb") as pipe:
            body = pipe.read()
        _, status = os.waitpid(pid, 0)
        if status != 0 or not body:
            return None
        # A pickle from our own forked copy, through a pipe only the two processes hold.
        found = pickle.loads(body)
        return found if isinstance(found, Found) else None


def _fork_audit(run: ValidatedRun, clean: set[str] | None) -> tuple[int, int]:
    read, write = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write)
        return pid, read
    os.close(read)  # the copy: from here on, never return into the caller
    code = 1
    try:
        before = set(clean) if clean is not None else None
        audited = audit_with_artifacts(run, collect_artifacts(run), clean)
        learnt = frozenset(clean - before) if clean is not None and before is not None else frozenset()
        with os.fdopen(write, "wb") as pipe:
            pipe.write(pickle.dumps(Found(audited.findings, learnt), protocol=pickle.HIGHEST_PROTOCOL))
        code = 0
    except BaseException:  # nothing said here: the build audits the run itself, and reports it
        pass
    finally:
        os._exit(code)


def _stop(pid: int, fd: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass
    try:
        os.close(fd)
    except OSError:
        pass
